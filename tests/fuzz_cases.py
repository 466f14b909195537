"""Machinery for tests/test_fuzz.py: run the CLI safely, judge a run against the CLI's contract, keep a
tally, and build mutated topology files, option values and baselines.

The contract every run is held to:

- exit 0 ok, 1 only when a baseline comparison fails its threshold, 2 bad usage or input;
- no Python traceback, no "internal error", no hang (a per-case time limit), no crash signal, and
  memory bounded (a per-case address-space cap, so a memory bomb fails fast instead of taking the
  machine down);
- on exit 2, exactly one non-empty line on stderr, naming the file or an option or value given;
- no NaN or infinity in what is printed on stdout (table, JSON, CSV, Markdown).

Knobs (environment variables):

==========================  ========================================================  =========
TRNSIM_FUZZ_EXAMPLES        hypothesis examples per in-process test                   per test
TRNSIM_FUZZ_RANDOM          1: random seeds and the example database (else fixed)     0
TRNSIM_FUZZ_KEEP_GOING      1: record failures and go on; fail once at the end        0
TRNSIM_FUZZ_REPORT          write the tally and one reproducer per failure class       unset
TRNSIM_FUZZ_TIMEOUT         seconds per case                                          20
TRNSIM_FUZZ_MEMORY_MB       address space of the test process during a case           4096
TRNSIM_FUZZ_MAX_RSS_MB      peak RSS of the test process checked at the end           4096
TRNSIM_FUZZ_LOG             append one line per case (time, outcome, argv) to a file  unset
==========================  ========================================================  =========
"""

from __future__ import annotations

import contextlib
import copy
import faulthandler
import io
import json
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CATALOG_DIR = ROOT / "topologies"


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


EXAMPLES = _env_int("TRNSIM_FUZZ_EXAMPLES", 0)  # 0: each test's default
RANDOM = os.environ.get("TRNSIM_FUZZ_RANDOM", "") == "1"
KEEP_GOING = os.environ.get("TRNSIM_FUZZ_KEEP_GOING", "") == "1"
REPORT = os.environ.get("TRNSIM_FUZZ_REPORT", "").strip() or None
TIMEOUT = float(_env_int("TRNSIM_FUZZ_TIMEOUT", 20))
MEMORY_MB = _env_int("TRNSIM_FUZZ_MEMORY_MB", 4096)
MAX_RSS_MB = _env_int("TRNSIM_FUZZ_MAX_RSS_MB", 4096)
LOG = os.environ.get("TRNSIM_FUZZ_LOG", "").strip() or None


def examples(default: int, scale: float = 1.0, minimum: int = 1) -> int:
    """Examples for one test: its default, or ``TRNSIM_FUZZ_EXAMPLES`` scaled for costly tests."""
    return max(minimum, int(EXAMPLES * scale)) if EXAMPLES else default


# ---------------------------------------------------------------------------------------------------
# Running the CLI
# ---------------------------------------------------------------------------------------------------


class CaseTimeout(BaseException):  # noqa: N818 - a BaseException so that `except Exception` lets it by
    """Raised by SIGALRM inside a case that ran out of time."""


@dataclass
class Run:
    """What one CLI run did."""

    argv: list
    code: int | None  # None: no exit code (hang, crash, exception that escaped main)
    out: str = ""
    err: str = ""
    seconds: float = 0.0
    timeout: bool = False
    signal: str | None = None  # a crash signal (subprocess runs)
    escaped: str | None = None  # the traceback of an exception that escaped main()
    where: str | None = None  # innermost trnsim frame when a timeout or escape hit
    isolated: bool = False


def _innermost_trnsim_frame(exc: BaseException) -> str | None:
    """Where in trnsim ``exc`` (or, failing that, an exception it was raised while handling) happened."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [
            f
            for f in traceback.extract_tb(exc.__traceback__)
            if "/trnsim/" in f.filename.replace(os.sep, "/")
        ]
        if frames:
            rel = frames[-1].filename.replace(os.sep, "/").split("/trnsim/", 1)[-1]
            return f"trnsim/{rel}:{frames[-1].lineno} in {frames[-1].name}"
        exc = exc.__context__
    return None


def _on_alarm(signum, frame):
    raise CaseTimeout()


def _show_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _cli_warnings():
    """Warnings as a plain ``python -m trnsim`` shows them: on stderr, deprecations hidden."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        warnings.showwarning = _show_warning
        yield


def _vm_bytes() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


@contextlib.contextmanager
def _memory_cap(total_mb: int):
    """Cap this process's address space at ``total_mb`` (at least 512 MiB above what is mapped now) for
    the duration of a case, so that a memory bomb raises MemoryError instead of taking the machine
    down (Linux; elsewhere no cap)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    current = _vm_bytes()
    if current is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = max(total_mb * 2**20, current + 2**29)  # what is mapped now stays usable: +512 MiB at least
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


_BASELINE_VM: list[int] = []


def _release_memory() -> None:
    """After a case that left this process much bigger (a memory bomb that hit the cap), collect its
    garbage and hand freed heap back to the OS, so that the next case's cap starts from the baseline."""
    current = _vm_bytes()
    if current is None:
        return
    if not _BASELINE_VM:
        _BASELINE_VM.append(current)
    if current - _BASELINE_VM[0] < 2**29:
        return
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


_WATCHDOG = Path(tempfile.gettempdir()) / f"trnsim-fuzz-watchdog-{os.getpid()}.txt"
_watchdog_file = None


def _arm_watchdog(argv: list, seconds: float) -> None:
    """A last resort for a case stuck in C code, where SIGALRM cannot interrupt it: after
    ``seconds`` faulthandler writes every thread's stack and the case's argv to a file and ends the
    whole test process (a hang must not hang CI)."""
    global _watchdog_file
    if _watchdog_file is None:
        import atexit

        _watchdog_file = open(_WATCHDOG, "w+")  # noqa: SIM115 - open for the life of the process
        atexit.register(lambda: _WATCHDOG.unlink(missing_ok=True))  # kept only if the process was killed
    _watchdog_file.seek(0)
    _watchdog_file.truncate()
    _watchdog_file.write(f"trnsim fuzz case stuck for {seconds:.0f} s: trnsim {shlex.join(map(str, argv))}\n")
    _watchdog_file.flush()
    faulthandler.dump_traceback_later(seconds, exit=True, file=_watchdog_file)


def run_inprocess(argv: list[str], timeout: float = TIMEOUT) -> Run:
    """Run ``trnsim ARGV`` in this process: captured output, SIGALRM time limit, address-space cap."""
    from trnsim.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    run = Run(argv=list(argv), code=None)
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
    _arm_watchdog(argv, 3 * timeout + 30)
    caught: BaseException | None = None
    start = time.perf_counter()
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(err))
            stack.enter_context(_cli_warnings())
            stack.enter_context(_memory_cap(MEMORY_MB))
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                main(list(argv))
                run.code = 0
            except SystemExit as exc:
                run.code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            except BaseException as exc:  # a timeout, or what a real process would print as a traceback
                caught = exc  # examined once the memory cap is lifted
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
    except CaseTimeout as exc:  # the alarm fired during the clean-up above
        caught = caught or exc
    finally:
        faulthandler.cancel_dump_traceback_later()
        if use_alarm:
            signal.signal(signal.SIGALRM, previous)
    run.seconds = time.perf_counter() - start
    if caught is not None:
        run.where = _innermost_trnsim_frame(caught)
        if isinstance(caught, CaseTimeout):
            run.timeout = True
        else:
            run.escaped = "".join(traceback.format_exception(caught))
        caught.__traceback__ = None  # let the case's frames (maybe gigabytes) go
        caught = None
    run.out, run.err = out.getvalue(), err.getvalue()
    del out, err
    _release_memory()
    return run


def _limit_child(memory_mb: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def run_isolated(
    argv: list, timeout: float = TIMEOUT, memory_mb: int = 4096, stdin=subprocess.DEVNULL
) -> Run:
    """Run ``python -m trnsim ARGV`` in a child with an address-space limit and a timeout; for cases that
    may crash the interpreter (deep nesting) or block in a system call (a FIFO, /dev/zero)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRNSIM_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "200"
    run = Run(argv=list(argv), code=None, isolated=True)
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "trnsim", *argv],
            cwd=ROOT,
            env=env,
            stdin=stdin,
            capture_output=True,
            timeout=timeout,
            preexec_fn=_limit_child(memory_mb),
        )
    except subprocess.TimeoutExpired as exc:
        run.timeout = True
        run.out = (exc.stdout or b"").decode("utf-8", "replace")
        run.err = (exc.stderr or b"").decode("utf-8", "replace")
    else:
        run.out = done.stdout.decode("utf-8", "replace")
        run.err = done.stderr.decode("utf-8", "replace")
        if done.returncode < 0:
            try:
                run.signal = signal.Signals(-done.returncode).name
            except ValueError:
                run.signal = f"signal {-done.returncode}"
        else:
            run.code = done.returncode
    run.seconds = time.perf_counter() - start
    return run


# ---------------------------------------------------------------------------------------------------
# Judging a run
# ---------------------------------------------------------------------------------------------------

# nan, inf, infinity as words (NaN, -Infinity, inf%, 1.#INF...), not inside other words (info, finance)
_NONFINITE = re.compile(r"(?<![A-Za-z])(nan|inf|infinity)(?![A-Za-z])", re.IGNORECASE)
_COMMAND_WORDS = {
    "topo",
    "collective",
    "compare",
    "sweep",
    "plot",
    "layout",
    "faults",
    "cluster",
    "fabric",
    "list",
    "show",
    "hops",
    "path",
    "export",
}


@dataclass
class Failure:
    kind: str  # the class: traceback, internal-error, exit-code, stderr-lines, nonfinite-output...
    detail: str  # what identifies it within its kind (normalised, for de-duplication)
    message: str  # what was seen, for a person


def _normalise(line: str) -> str:
    """A stderr line with the case-specific parts (paths, quoted values, numbers) blanked out."""
    line = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", line)
    line = re.sub(r"(?<!\w)[^\s:'\"]*/[^\s:'\"]*", "PATH", line)
    line = re.sub(r"\d[\d,._]*(e[+-]?\d+)?", "N", line)
    return line.strip()[:110]


def user_strings_of(argv) -> list[str]:
    """What a user typed, and its pieces as the CLI may print them: ``--set name='nan'`` prints nan."""
    found: list[str] = []
    for arg in map(str, argv):
        found.append(arg)
        for part in re.split(r":set=|=|,", arg):
            found += [part, part.strip().strip("'\"")]
    return [s for s in found if s]


def nonfinite_tokens(text: str, user_strings=()) -> list[str]:
    """NaN/inf tokens in ``text``, ignoring any user-given string that itself contains one."""
    for s in sorted({s for s in user_strings if isinstance(s, str) and _NONFINITE.search(s)}, key=len)[::-1]:
        text = text.replace(s, " ")
    return [m.group(0) for m in _NONFINITE.finditer(text)]


def _json_nonfinite_paths(text: str) -> list[str]:
    """Key paths of NaN/Infinity values in a JSON document (``rows[].time_us``)."""
    found: list[str] = []

    def constant(name):
        return float(name.replace("Infinity", "inf"))

    try:
        document = json.loads(text, parse_constant=constant)
    except ValueError:
        return found

    def walk(node, path):
        if isinstance(node, float) and not math.isfinite(node):
            found.append(path or "(top)")
        elif isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(node, list):
            for value in node:
                walk(value, f"{path}[]")

    walk(document, "")
    return sorted(set(found))


def judge(
    run: Run,
    *,
    allow_threshold: bool = False,
    names=(),
    user_strings=(),
    expect_exit: int | None = None,
    expect_why: str = "",
) -> list[Failure]:
    """Every way ``run`` breaks the contract (an empty list: it kept it).

    Parameters
    ----------
    allow_threshold : bool
        Exit 1 is allowed (the run checked a --baseline).
    names : iterable of str
        On exit 2 the error line must contain one of these (the file, the options and values given).
    user_strings : iterable of str
        Text the user supplied, exempt from the NaN/inf scan of stdout (a SKU called ``nan``).
    expect_exit : int, optional
        The exit code an oracle knows the run must have (a corrupt baseline must exit 2).
    """
    fails: list[Failure] = []
    command = " ".join(str(a) for a in run.argv[:2] if str(a) in _COMMAND_WORDS) or "trnsim"
    # lines as a terminal shows them: split at newlines only (str.splitlines also splits at \x1e, \x85...)
    first = next((line for line in run.err.split("\n") if line.strip()), "")
    if run.timeout:
        if run.isolated:
            where = "child process"
        else:
            where = run.where or "(no trnsim frame: blocked in a system call or C code)"
        function = re.sub(r":\d+ in ", " in ", where)  # one class per function, not per line
        fails.append(
            Failure("timeout", f"{command} @ {function}", f"no result after {run.seconds:.0f} s; at {where}")
        )
        return fails
    if run.signal:
        fails.append(Failure("crash-signal", f"{command} {run.signal}", f"killed by {run.signal}; {first}"))
        return fails
    if run.escaped:
        last = run.escaped.strip().splitlines()[-1]
        exc_type = last.split(":")[0]
        fails.append(
            Failure(
                "escaped-exception",
                f"{exc_type} @ {run.where}",
                f"an exception escaped main() (a traceback in a real run): {last[:300]}",
            )
        )
        return fails
    if "Traceback (most recent call last)" in run.err:
        last = run.err.strip().splitlines()[-1]
        fails.append(Failure("traceback", _normalise(last), f"traceback on stderr: {last[:300]}"))
    if re.search(r"internal error", run.err, re.IGNORECASE):
        fails.append(Failure("internal-error", _normalise(first), first[:300]))
    if "out of memory" in run.err or "MemoryError" in run.err:
        fails.append(
            Failure(
                "memory",
                f"{command}: {_normalise(first)}",
                f"the case needed more memory than the harness allows "
                f"({'4096' if run.isolated else MEMORY_MB} MiB of address space): {first[:200]}",
            )
        )
    warning = re.search(r"^\S+:\d+: (\w+Warning): (.*)$", run.err, re.M)
    if warning:
        fails.append(
            Failure(
                "python-warning", warning.group(1), f"a Python warning on stderr: {warning.group(0)[:200]}"
            )
        )
    allowed = {0, 1, 2} if allow_threshold else {0, 2}
    if run.code not in allowed:
        fails.append(
            Failure("exit-code", f"{command} exit {run.code}", f"exit {run.code}, expected one of {allowed}")
        )
    if expect_exit is not None and run.code != expect_exit and run.code in allowed:
        fails.append(
            Failure(
                "accepted-bad-input",
                f"{command}: {expect_why}",
                f"exit {run.code}, expected {expect_exit}: {expect_why}; stderr: {run.err.strip()[:200]!r}",
            )
        )
    explained = ("traceback", "memory", "internal-error", "python-warning")
    if run.code == 2 and not any(f.kind in explained for f in fails):
        lines = [line for line in run.err.split("\n") if line.strip()]
        err = run.err.lower()  # an echoed value may be lower-cased (--algo RING): compare case-blind
        candidates = [*map(str, names), *(repr(n) for n in names if not str(n).strip())]
        named = any(c and (c.lower() in err or repr(c)[1:-1].lower() in err) for c in candidates)
        if len(lines) != 1:
            fails.append(
                Failure(
                    "stderr-lines",
                    f"{command}: {len(lines) if len(lines) < 2 else 'several'} lines: {_normalise(first)}",
                    f"exit 2 with {len(lines)} non-empty stderr lines (expected exactly 1): {run.err[:400]!r}",
                )
            )
        elif names and not named:
            fails.append(
                Failure(
                    "unnamed-error",
                    f"{command}: {_normalise(first)}",
                    f"the error names none of the file, options or values given: {first[:300]!r}",
                )
            )
    tokens = nonfinite_tokens(run.out, user_strings)
    if tokens:
        paths = _json_nonfinite_paths(run.out)
        detail = f"{command} json {', '.join(paths[:3])}" if paths else f"{command} text"
        fails.append(
            Failure(
                "nonfinite-output", detail, f"stdout contains {sorted(set(tokens))}; JSON paths {paths[:5]}"
            )
        )
    return fails


# ---------------------------------------------------------------------------------------------------
# The tally and the failure classes
# ---------------------------------------------------------------------------------------------------


@dataclass
class Example:
    argv: list
    files: dict  # path -> bytes of the files the case wrote
    run: Run
    failure: Failure
    note: str = ""

    @property
    def size(self) -> int:
        return sum(len(b) for b in self.files.values()) + sum(len(str(a)) for a in self.argv)


@dataclass
class Recorder:
    outcomes: Counter = field(default_factory=Counter)  # (test, outcome) -> count
    classes: dict = field(default_factory=dict)  # (kind, detail) -> [count, smallest Example]
    cases: int = 0
    seconds: float = 0.0
    slowest: list = field(default_factory=list)  # the five slowest (seconds, case)

    def record(self, test: str, run: Run, fails: list[Failure], files: dict, note: str = "") -> None:
        self.cases += 1
        self.seconds += run.seconds
        self.slowest = sorted(
            [*self.slowest, (run.seconds, f"{test}: trnsim {shlex.join(map(str, run.argv))}"[:300])],
            reverse=True,
        )[:5]
        outcome = (
            "timeout"
            if run.timeout
            else f"crash {run.signal}"
            if run.signal
            else "escaped exception"
            if run.escaped
            else f"exit {run.code}"
        )
        self.outcomes[(test, outcome)] += 1
        if LOG:
            kinds = ",".join(f.kind for f in fails) or "ok"
            line = f"{run.seconds:7.2f}s {test:15} {outcome:12} {kinds:20} trnsim {shlex.join(map(str, run.argv))}"
            with open(LOG, "a", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(printable(line)[:400] + (f"  # {note[:200]}" if note else "") + "\n")
        for failure in fails:
            self.outcomes[(test, f"FAIL {failure.kind}")] += 1
            key = (failure.kind, failure.detail)
            example = Example(list(run.argv), dict(files), run, failure, note)
            if key not in self.classes:
                self.classes[key] = [1, example]
            else:
                self.classes[key][0] += 1
                if example.size < self.classes[key][1].size:
                    self.classes[key][1] = example

    def failures(self) -> int:
        return sum(count for count, _ in self.classes.values())

    def summary(self) -> str:
        tests = sorted({test for test, _ in self.outcomes})
        lines = [
            f"trnsim fuzz tally: {self.cases} CLI runs in {self.seconds:.1f} s "
            f"(timeout {TIMEOUT:g} s/case, address space capped at {MEMORY_MB} MiB; "
            f"{'random seeds' if RANDOM else 'derandomized'}"
            f"{', keep-going' if KEEP_GOING else ''})",
        ]
        lines += [f"  slow: {seconds:.2f} s {case}" for seconds, case in self.slowest if seconds >= 1.0]
        total = Counter()
        for test in tests:
            parts = {o: n for (t, o), n in self.outcomes.items() if t == test}
            total.update(parts)
            lines.append(f"  {test}: " + ", ".join(f"{o}: {n}" for o, n in sorted(parts.items())))
        lines.append("  total: " + ", ".join(f"{o}: {n}" for o, n in sorted(total.items())))
        if self.classes:
            lines.append(f"{len(self.classes)} failure classes ({self.failures()} failing checks):")
            for (kind, detail), (count, example) in sorted(self.classes.items()):
                lines.append(f"  [{kind}] {detail}  (x{count})")
                lines.append(f"      e.g. {describe_command(example)}")
                lines.append(f"      seen: {example.failure.message[:300]}")
        else:
            lines.append("no failure classes")
        return "\n".join(lines)

    def write_report(self, path: Path) -> None:
        """The summary, and for each failure class a reproducer: its files and command line."""
        path.parent.mkdir(parents=True, exist_ok=True)
        cases_dir = path.with_name(path.stem + "-cases")
        cases_dir.mkdir(exist_ok=True)
        lines = [self.summary(), "", "reproducers (files saved under " + str(cases_dir) + "):"]
        for n, ((kind, detail), (count, example)) in enumerate(sorted(self.classes.items()), 1):
            argv = [str(a) for a in example.argv]
            for original, data in example.files.items():
                saved = cases_dir / f"{n:03d}-{kind}-{Path(original).name[-60:]}"
                try:
                    saved.write_bytes(data)
                except OSError:
                    saved = cases_dir / f"{n:03d}-{kind}.bin"
                    saved.write_bytes(data)
                argv = [
                    str(saved) if a == str(original) else a.replace(str(original), str(saved)) for a in argv
                ]
            prefix = "python -m trnsim" if example.run.isolated else "trnsim"
            lines += [
                "",
                f"{n}. [{kind}] {detail} (x{count})",
                f"   {prefix} {shlex.join(argv)}",
                f"   exit {example.run.code}; {example.failure.message[:500]}",
                f"   stderr: {example.run.err.strip()[:500]!r}",
            ]
            if example.note:
                lines.append(f"   case: {example.note[:500]}")
            if example.run.escaped:
                lines.append("   " + example.run.escaped.strip().replace("\n", "\n   ")[-1500:])
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")


def describe_command(example: Example) -> str:
    prefix = "python -m trnsim" if example.run.isolated else "trnsim"
    return f"{prefix} {shlex.join(map(str, example.argv))}"[:400]


RECORDER = Recorder()


def printable(text: str) -> str:
    """``text`` safe to print or write as UTF-8 (lone surrogates from non-UTF-8 arguments escaped)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check(
    test: str,
    run: Run,
    files: dict | None = None,
    note: str = "",
    extra: list[Failure] = (),
    **judge_args,
) -> None:
    """Judge ``run``, record it, and (unless keep-going) fail the test with everything seen."""
    files = files or {}
    fails = judge(run, **judge_args) + list(extra)
    RECORDER.record(test, run, fails, files, note)
    if fails and not KEEP_GOING:
        raise AssertionError(printable(failure_message(run, fails, files, note)))


def failure_message(run: Run, fails: list[Failure], files: dict, note: str = "") -> str:
    prefix = "python -m trnsim" if run.isolated else "trnsim"
    lines = [f"{prefix} {shlex.join(map(str, run.argv))}"]
    lines += [f"  [{f.kind}] {f.message}" for f in fails]
    lines.append(f"  exit {run.code}, {run.seconds:.2f} s")
    lines.append(f"  stderr: {run.err[-1500:]!r}")
    lines.append(f"  stdout: {run.out[:600]!r}{' ...' if len(run.out) > 600 else ''}")
    if note:
        lines.append(f"  case: {note[:1000]}")
    for path, data in files.items():
        text = data[:1500].decode("utf-8", "replace")
        lines.append(f"  file {path} ({len(data)} bytes):\n    " + text.replace("\n", "\n    "))
    if run.escaped:
        lines.append("  " + run.escaped[-3000:])
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# Inputs: the catalog documents, odd values, paths into a document
# ---------------------------------------------------------------------------------------------------

CATALOG_FILES = sorted(CATALOG_DIR.glob("*.yaml"))
DOCUMENTS = {path.name: yaml.safe_load(path.read_text(encoding="utf-8")) for path in CATALOG_FILES}


def find_file(sku: str) -> str:
    """The catalog file name of a SKU name or alias."""
    for name, document in DOCUMENTS.items():
        if sku.lower() in [
            str(document.get("name", "")).lower(),
            *map(str.lower, document.get("aliases", [])),
        ]:
            return name
    raise KeyError(sku)


SMALL_SKUS = ["nl16", "nl64", "nl32x2", "trn3-ultraserver-gen1", "trn3-nl32x2-gen3"]
SKUS = [*SMALL_SKUS, "nl72x2", "trn3-nl72x2-gen3", "trn3-ultraserver-gen2"]

EXTREME_NUMBERS = [
    1e300,
    1e-300,
    10**12,
    0,
    -1,
    10**9,
    100000,
    2**31,
    2**63,
    2**64,
    -0.0,
    0.5,
    1.000001,
    5e-324,
    1.7976931348623157e308,
    float("nan"),
    float("inf"),
    float("-inf"),
]

MARKUP = [
    "[/]",
    "[bold]x",
    "tpu [v2]",
    "[red]alert[/red]",
    "[link=https://example.com]x[/link]",
    "[/bold]",
    "[",
    "]",
    "[[x]]",
    "a\\[b]",
    "x\\",
    "[b]x[/i]",
    ":smile:",
    "[bold]",
    "[on red]",
]

ODD_SNIPPETS = [
    "? [a, b]\n: 1\n",
    "{a: 1}: 2\n",
    "? {a: 1}\n: 2\n",
    "<<: {x_merge: 1}\n",
    "merged: {<<: [{a: 1}, {b: 2}]}\n",
    "obj: !!python/object:os.system x\n",
    "blob: !!binary aGVsbG8=\n",
    "when: 2024-01-01\n",
    "when: 2024-01-01T10:00:00Z\n",
    "odd_set: !!set {a, b}\n",
    "odd_omap: !!omap [a: 1, b: 2]\n",
    "custom: !mytag x\n",
    "ref: *undefined_anchor\n",
    "self: &loop [*loop]\n",
    "1: numeric key\n",
    "null: null key\n",
    "true: bool key\n",
    "? |\n  block key\n: 1\n",
    "tab:\t1\n",
    "\t- tabbed\n",
    "---\nsecond: document\n",
    "...\n",
    "%YAML 1.1\n---\n",
    "'quoted key': 1\n",
    "big: 99999999999999999999999999999999999999\n",
    "neg: -.inf\n",
    "x: 0x1F\n",
    "y: 0o17\n",
    "z: 1_000\n",
    "s: 1:30\n",
]


def paths_of(node, prefix=(), seen=None):
    """Every path into a document (dict keys and list indices), the root included; a container shared
    by several places (an alias) or containing itself is entered once."""
    seen = set() if seen is None else seen
    yield prefix
    if isinstance(node, dict | list):
        if id(node) in seen or len(prefix) > 200:
            return
        seen.add(id(node))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            yield from paths_of(value, (*prefix, key), seen)


def load_yaml(data: bytes):
    """The document of a YAML file, or None when it is not one (the harness's view, not trnsim's)."""
    try:
        return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:  # not YAML, not UTF-8, too deep...
        return None


def strings_in(data: bytes) -> list[str]:
    """The string scalars and keys of a YAML file (what the user wrote, e.g. a SKU named ``nan``)."""
    document = load_yaml(data)
    found: list[str] = []
    for path in paths_of(document):
        value = get_at(document, path)
        found += [value] if isinstance(value, str) else []
        found += [str(path[-1])] if path else []
    return found


def get_at(node, path):
    for part in path:
        node = node[part]
    return node


def set_at(node, path, value):
    if not path:
        return value
    parent = get_at(node, path[:-1])
    parent[path[-1]] = value
    return node


def delete_at(node, path):
    if not path:
        return node
    parent = get_at(node, path[:-1])
    del parent[path[-1]]
    return node


def dump_yaml(document) -> str:
    """YAML text of a document (shared objects become anchors and aliases, floats .nan and .inf)."""
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100)


def fresh(name: str):
    return copy.deepcopy(DOCUMENTS[name])


def bomb(width: int, depth: int, kind: str = "list"):
    """A "billion laughs" value: ``depth`` levels each holding ``width`` references to the level below
    (``width ** depth`` leaves once expanded; a few kilobytes of YAML)."""
    node = "lol"
    for level in range(depth):
        node = [node] * width if kind == "list" else {f"k{level}_{i}": node for i in range(width)}
    return node


def nested(depth: int, kind: str = "[") -> str:
    """``depth`` levels of flow-style nesting as YAML text."""
    if kind == "[":
        return "[" * depth + "1" + "]" * depth
    return "{a: " * depth + "1" + "}" * depth


def schema_fields() -> dict[str, str]:
    """Every dotted ``--set`` key the schema defines (list elements by index and by name), with its
    kind: int, float, bool, str, ``enum:a|b``, struct, list or dict."""
    import msgspec
    from msgspec import inspect as mi

    from trnsim.spec import schema

    fields: dict[str, str] = {}

    def join(prefix: str, part: str) -> str:
        return f"{prefix}.{part}" if prefix else part

    def kind_of(info) -> str:
        if isinstance(info, mi.UnionType):
            kinds = [kind_of(t) for t in info.types if not isinstance(t, mi.NoneType)]
            return kinds[0] if kinds else "str"
        if isinstance(info, mi.LiteralType):
            return "enum:" + "|".join(map(str, info.values))
        return {
            mi.IntType: "int",
            mi.FloatType: "float",
            mi.BoolType: "bool",
            mi.StrType: "str",
            mi.StructType: "struct",
            mi.ListType: "list",
            mi.DictType: "dict",
        }.get(type(info), "str")

    def walk(info, prefix: str) -> None:
        if isinstance(info, mi.UnionType):
            for t in info.types:
                if not isinstance(t, mi.NoneType):
                    walk(t, prefix)
            return
        if prefix:
            fields[prefix] = kind_of(info)
        if isinstance(info, mi.StructType):
            for f in info.fields:
                walk(f.type, join(prefix, f.name))
        elif isinstance(info, mi.ListType) and isinstance(info.item_type, mi.StructType):
            for element in ("0", "1", "x", "z", "A", "-1", "99"):
                walk(info.item_type, join(prefix, element))
        elif isinstance(info, mi.DictType) and isinstance(info.value_type, mi.StructType):
            for element in ("scorpio-x-160", "new-model"):
                walk(info.value_type, join(prefix, element))

    walk(msgspec.inspect.type_info(schema.Spec), "")
    return fields
