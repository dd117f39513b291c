"""The backend passes the conformance kit's shape-and-dtype part, and the kit's xfail list works."""
from __future__ import annotations

pytest_plugins = ["pytester"]

SUBSET = "-k", "test_op and (add or transpose or sum)"


def test_kit_passes_for_a_subset(pytester):
    result = pytester.runpytest_subprocess("--pyargs", "flambeau.testing", "--flambeau-backend", "meta",
                                           "-p", "no:cacheprovider", *SUBSET)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 30 and "failed" not in outcomes, outcomes


def _with_xfail(pytester, entries: dict) -> None:
    # A conftest that gives the meta backend an xfail list (as a backend would declare it).
    pytester.makeconftest(f"""
import flambeau_meta._backend as b
b.MetaBackend.conformance_xfail = {entries!r}
""")


def test_an_xfail_that_passes_fails_the_run(pytester):
    _with_xfail(pytester, {"add:float32": "pretend bug"})
    result = pytester.runpytest_subprocess("--pyargs", "flambeau.testing", "--flambeau-backend", "meta",
                                           "-p", "no:cacheprovider", "-k", "test_op and add-float32",
                                           "--rootdir", str(pytester.path), "--confcutdir", str(pytester.path))
    result.stdout.fnmatch_lines(["*XPASS(strict)*"])
    assert result.ret != 0


def test_an_xfail_that_fails_is_expected(pytester):
    pytester.makeconftest("""
import flambeau_meta._backend as b, flambeau_meta._views as v
b.MetaBackend.conformance_xfail = {"transpose": "broken on purpose"}
v.KERNELS["transpose"] = lambda input, dim0, dim1: input
""")
    result = pytester.runpytest_subprocess("--pyargs", "flambeau.testing", "--flambeau-backend", "meta",
                                           "-p", "no:cacheprovider", "-k", "test_op and transpose")
    result.assert_outcomes(xfailed=12, passed=1)  # the error cases (key errors:transpose) still pass


def test_without_a_backend_the_kit_skips(pytester):
    result = pytester.runpytest_subprocess("--pyargs", "flambeau.testing", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) > 0 and "passed" not in outcomes and "failed" not in outcomes
