"""Host code: ``@ascdsl.host`` lowered to a C++ tiling function, the launch plan, the op project's files and the cores a
kernel runs on."""
