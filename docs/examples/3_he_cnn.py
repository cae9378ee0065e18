"""3. Encrypted MNIST inference: classify a digit the model never sees in the clear.

Run from the repository root: ``.venv/bin/python docs/examples/3_he_cnn.py``. The first run
makes a key set (seconds) and keeps it in ~/.cache/cryptoffload/he-cnn-keys (0700, files
0600); later runs read it back.
"""

from cryptoffload import he_cnn

p = he_cnn.classify(3)                                       # held-out image 3 (or a PNG/JPEG path)
print(p.digit, p.label, p.agrees)                            # 3 3 True
print(p)                                                     # e.g. digit 3 (p=1.00, label 3) in 1.1 s

# Many images in one program: keys and encoded weights once, then each image alone.
clf = he_cnn.Classifier()
print(clf.keys_reused)                                       # True
print([clf.classify(i).digit for i in (0, 1)])               # [0, 1]
