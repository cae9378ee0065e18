"""3. Encrypted MNIST inference: classify digits the model never sees in the clear.

Run from the repository root: ``.venv/bin/python docs/examples/3_he_cnn.py``. The first run
makes a key set (seconds) and keeps it in ~/.cache/cryptoffload/he-cnn-keys (0700, files
0600); later runs read it back. ``he_cnn.classify(image)`` does the same for one image.
"""

from cryptoffload import he_cnn

clf = he_cnn.Classifier()                                    # keys (made once, then kept) and encoded weights
p = clf.classify(3)                                          # held-out image 3 (or a PNG/JPEG path, or pixels)
print(p.digit, p.label, p.agrees)                            # 3 3 True
print(p)                                                     # e.g. digit 3 (p=1.00, label 3) in 0.57 s

# More images: each costs only its encryption, evaluation and decryption.
print([clf.classify(i).digit for i in (0, 1)])               # [0, 1]
