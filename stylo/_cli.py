"""What the command lines share: usage errors on one line, output folders checked up front."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

__all__ = ["OneLineParser", "output_folder_problem"]


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one stderr line, ``NAME: MESSAGE``, and exit 2.

    argparse prints the usage text before the message, which buries the message under a
    screenful of options; ``--help`` still shows the usage.
    """

    def __init__(self, *args, name: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.name = name

    def error(self, message: str):
        self.exit(2, f"{self.name}: {message}\n")


def output_folder_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be made or written as an output folder, or None when it can.

    Nothing is created: the folder (or its nearest existing ancestor) must be a writable
    folder, so a run fails before its work rather than when it writes the results.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        return "is a file, not a folder"
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot be created: {existing} is a file"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot be written: {existing} is not writable"
    return None
