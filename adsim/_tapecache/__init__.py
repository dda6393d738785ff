"""The functional API's tape cache (cache.py) and what decides that a
cached tape may be replayed: snapshots of what a function reads
(purity.py), what they keep of arrays (frozen_array.py: the bytes of small
ones, content digests of larger ones from _digest.pyx), its bytecode
(codeinfo.py), random draws (random_watch.py), and fingerprints of
functions (fingerprint.py, also naming primitives in tape files)."""
