"""The callback classes tape files hold: the writer names them (below the
classes, adsim/_tapefile_write.py), the reader builds them (adsim/tapefile.py);
both lists are the same."""
from adsim import _tapefile_write, tapefile


def test_writer_and_reader_know_the_same_callback_classes():
    classes = tapefile.callback_classes()
    assert set(classes) == set(_tapefile_write.CALLBACK_CLASSES)
    for kind, cls in classes.items():
        assert cls.file_kind == kind
        assert _tapefile_write.CALLBACK_CLASSES[kind] == f"{cls.__module__}.{cls.__qualname__}"
        assert callable(tapefile._reader(cls)), kind


def test_solver_solutions_are_read_above_the_solvers():
    from adsim._scipy import solver_files
    for kind, read in solver_files.READERS.items():
        cls = tapefile.callback_classes()[kind]
        assert cls.from_file_state is None and tapefile._reader(cls) is read
