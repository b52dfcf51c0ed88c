"""Dataset registry and loaders.

``load(name, **options)`` returns a :class:`~stylo.corpus.Corpus` (texts with authors) or a
:class:`~stylo.corpus.PairSet` (PAN-style verification problems). Data are looked up in
``$STYLO_DATA`` (``os.pathsep``-separated), then ``./data/``, then ``../shared/data/``; the
registry ``registry.json`` (package data beside this module) gives each dataset's file and
checksum.

Names: ``blog``, ``enron``, ``federalist``, ``guardian``, ``imdb62``, ``mlpapers``,
``pan13_av_en``, ``pan14_av`` (or one corpus: ``pan14_av/en_essays``), ``pan15_av_en``,
``pan18_cdaa``, ``pan19_cdaa``; ``load(path)`` reads a corpus of one's own from a folder
holding ``texts.jsonl[.gz]`` or ``pairs.jsonl[.gz]`` (or that file) in the same format, with the
same checks; ``load_pan20_format(folder)`` reads the official PAN20/21 ``pairs.jsonl`` +
``truth.jsonl`` layout from any folder.

Modules: ``_registry`` (what is registered, where it is, checksums), ``_jsonl`` and
``_readers`` (reading the files), ``_filters`` (the options of ``load``), ``_load``,
``_pan20`` (the PAN20/21 layout and label fixture).
"""

from stylo.datasets._jsonl import DataError
from stylo.datasets._load import load
from stylo.datasets._pan20 import Pan20Labels, load_pan20_format, load_pan20_labels
from stylo.datasets._registry import DatasetNotAvailable, available, data_roots, registry

__all__ = [
    "DataError",
    "DatasetNotAvailable",
    "available",
    "data_roots",
    "load",
    "load_pan20_format",
    "load_pan20_labels",
    "registry",
    "Pan20Labels",
]
