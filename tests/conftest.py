"""Test-wide settings: nothing reaches a hub or an account."""

import os

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Under pytest-xdist (`make test` runs two workers), each worker gets its share of the cores, so
# torch's OpenMP threads of two workers do not fight over the same cores. Set before torch loads;
# subprocesses (CLI runs, DDP, Ray workers) inherit it.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

import pytest


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    """A tiny random BERT (2 layers, hidden 32) with the packaged MiniLM tokenizer: fast tests."""
    from train.rehearsal.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), seed=0)


@pytest.fixture(scope="session")
def no_shallow(tmp_path_factory):
    """An overlay for a rated task's config: the test report without the shallow learner's fit
    (``RatedTestReport(shallow: false)``), for tests about something else."""
    path = tmp_path_factory.mktemp("overlays") / "no_shallow.yaml"
    path.write_text("trainer:\n  callbacks:\n    - class_path: train.callbacks.RatedTestReport\n"
                    "      init_args: {shallow: false}\n    - class_path: train.callbacks.Export\n")
    return str(path)


@pytest.fixture(scope="session")
def default_synthetic(tmp_path_factory):
    """The SYNTHETIC default sets (seed 0, default sizes: ``data.synth.generate_default``), generated once
    per `make test` and shared by its workers (a file lock: a second worker waits for the first one's
    sets instead of generating them again; about a minute each). Read only: a test that edits sets copies
    them first."""
    from filelock import FileLock

    from data.synth.generate import generate_default

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # xdist: the workers' common folder
    folder = root / "default_synthetic"
    with FileLock(str(root / "default_synthetic.lock")):
        generate_default(folder)  # nothing to do when the sets are there, made by this generator
    return folder


@pytest.fixture
def nltk_errors_to_stderr(monkeypatch):
    """radeval's import calls nltk.download, which fails offline and says so. nltk writes that to the
    sys.stderr of when nltk.downloader was first imported, which may be an earlier test's capture, closed
    since: point it at this test's."""
    import functools
    import sys

    nltk = pytest.importorskip("nltk")
    monkeypatch.setattr(nltk, "download", functools.partial(nltk.download, print_error_to=sys.stderr))


@pytest.fixture(scope="session")
def released_python():
    """The python of ``.venv-ratescore``, the released ``ratescore`` package's own venv (made on
    first use by ``benchmarks/scoring/released_package.py``); a test using it skips, with the reason, when
    the venv cannot be made."""
    import sys

    from benchmarks.scoring.released_package import ensure_released_venv

    try:
        return ensure_released_venv(log=lambda msg: print(msg, file=sys.stderr))
    except RuntimeError as err:
        pytest.skip(f"the released ratescore package's venv could not be made: {err}")


def pytest_addoption(parser):
    parser.addoption("--store-durations", action="store_true",
                     help="write each test file's time into tests/durations.json, the order of `make test`")


def pytest_configure(config):
    from tests.ordering import DurationRecorder

    if config.getoption("store_durations") and not hasattr(config, "workerinput"):  # xdist: the controller only
        config.pluginmanager.register(DurationRecorder(), "radscore-durations")


def pytest_unconfigure(config):
    """The last hook of a pytest process (each xdist worker too): freeze the heap, so that the garbage
    collections of Python's exit do not walk every object the tests left behind. A worker of the full
    suite took about 10 s to exit (xdist's limit before it kills one), the comparators' file alone 2.9 s
    and 0.8 s with the heap frozen. Nothing runs after this hook but the process's exit."""
    import gc

    gc.freeze()


def pytest_collection_modifyitems(config, items):
    """Longest file first (tests/ordering.py): `make test` hands files to its two workers one at a
    time in this order (pytest-xdist --dist loadfile --no-loadscope-reorder), so the long files overlap
    the many short ones instead of running last on one worker."""
    from tests.ordering import file_of, longest_first, read_durations

    slow_files = {file_of(item.nodeid) for item in items if item.get_closest_marker("slow")}
    longest_first(items, read_durations(), slow_files)


def _die_mid_write(write, limit: int = 4096) -> int:
    """Run ``write()`` in a forked child that the kernel kills (SIGXFSZ) as soon as a file it writes
    grows past ``limit`` bytes: a kill in the middle of the write, at a known byte. Returns the
    signal that ended the child (0 when ``write`` finished within the limit)."""
    import resource
    import signal
    import sys

    pid = os.fork()
    if pid == 0:  # the child: no output anywhere a size limit applies, then the write
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            sys.stdout = sys.stderr = open(os.devnull, "w")  # pytest's capture writes to a file of its own
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
            write()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


@pytest.fixture
def die_mid_write():
    """``die_mid_write(write, limit=4096)``: run a writer in a child killed part-way through its file
    (see ``_die_mid_write``); returns the signal that ended it."""
    return _die_mid_write
