"""Dicts, lists and tuples of parameters as flat inputs: containers as
leaves and a treedef (tree.py), tapes recorded with container arguments
(tree_tape.py), and containers passed to code recorded on a tape of its own
(container_args.py)."""
