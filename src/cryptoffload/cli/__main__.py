"""``python -m cryptoffload.cli``: the same entry point as the ``cryptoffload`` script."""

from cryptoffload.cli import main

if __name__ == "__main__":
    main()
