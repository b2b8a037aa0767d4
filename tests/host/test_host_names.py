"""A host variable never takes a name the generated function cannot give it: the ``ascdsl_host`` runtime's
names are read from ``templates/host_runtime.h.j2`` (what it declares in its namespace, not its locals)."""
from ascdsl.backend.host.hostcode import CPP_KEYWORDS, cpp_name
from ascdsl.backend.kir.host import Runtime
from ascdsl.backend.names import naming
from ascdsl.backend.render import jinja


def test_the_runtime_names_are_what_the_runtime_declares():
    declared = jinja.declared_names("host_runtime.h.j2")
    called = {r.value.removeprefix("ascdsl_host::") for r in Runtime if r.value.startswith("ascdsl_host::")}
    assert called <= declared
    assert {"Shape", "TensorDesc", "Platform", "HostError", "Status", "OK", "HOST_ERROR", "MAX_DIMS", "NO_BOUND",
            "LargestFitting", "ascdsl_host"} <= declared
    assert not {"dims", "ndim", "n", "i", "a", "shape", "Fits", "numeric_limits", "min"} & declared  # locals, members


def test_host_variables_step_around_keywords_and_runtime_names():
    assert naming.CPP_KEYWORDS <= CPP_KEYWORDS
    assert [cpp_name(n) for n in ("Numel", "LargestFitting", "requires", "tiling", "n", "dims")] == \
        ["Numel_", "LargestFitting_", "requires_", "tiling_", "n", "dims"]
