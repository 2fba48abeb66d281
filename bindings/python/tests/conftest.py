"""pytest as the project's stages report: a TAP line per test and the
closing line "python: N passed, N failed, N skipped" (tests/lib/tally)."""

import os

import pytest

BUILD = os.environ.get("SECBUF_PY_BUILD", "")


@pytest.fixture(scope="session")
def build_dir():
    """build/python, where make put the module and the tests' helpers."""
    if not BUILD:
        pytest.fail("SECBUF_PY_BUILD is not set: run the tests with make check")
    return BUILD


class Tap:
    """One TAP line per test, from the worst of its setup, call and teardown."""

    def __init__(self):
        self.n = 0
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}
        self.outcome = {}

    def pytest_sessionstart(self, session):
        self.reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def pytest_runtest_logreport(self, report):
        was = self.outcome.get(report.nodeid, ("passed", ""))
        if report.failed:
            self.outcome[report.nodeid] = ("failed", "")
        elif report.skipped and was[0] == "passed":
            why = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            self.outcome[report.nodeid] = ("skipped", why)
        else:
            self.outcome.setdefault(report.nodeid, was)

    def pytest_runtest_logfinish(self, nodeid):
        outcome, why = self.outcome.pop(nodeid, ("passed", ""))
        self.n += 1
        self.counts[outcome] += 1
        line = f"{'not ok' if outcome == 'failed' else 'ok'} {self.n} {nodeid}"
        if outcome == "skipped":
            line += f" # SKIP {why}"
        self.reporter.write_line(line)

    # The TAP lines stand in for pytest's progress letters.
    def pytest_report_teststatus(self, report):
        word = "passed" if report.passed else "failed" if report.failed else "skipped"
        if report.when == "call" or not report.passed:
            return word, "", word.upper()
        return None

    def pytest_terminal_summary(self, terminalreporter):
        c = self.counts
        terminalreporter.write_line(f"1..{self.n}")
        terminalreporter.write_line(
            f"python: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped")


def pytest_configure(config):
    config.pluginmanager.register(Tap(), "secbuf-tap")
