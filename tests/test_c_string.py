"""``emit.c_string``, the one C string literal of the kernel and the host code: g++ (as C++14, where ``??=``
is a trigraph) reads it back as the UTF-8 bytes of the text."""
import subprocess

from ascdsl.backend.render.emit import c_string, host_literal

TEXT = 'a "quoted" \\ path\nwhat??= ?? (x <= 3) \u2264 \t\u00e9'


def test_c_string_reads_back_as_the_texts_bytes(tmp_path):
    assert host_literal(TEXT) == c_string(TEXT)
    source = tmp_path / "s.cpp"
    source.write_text(f"#include <cstdio>\nint main() {{ std::fputs({c_string(TEXT)}, stdout); return 0; }}\n")
    subprocess.run(["g++", "-std=c++14", "-trigraphs", "-Wall", "-Werror", "-o", str(tmp_path / "s"), str(source)],
                   check=True)
    assert subprocess.run([str(tmp_path / "s")], capture_output=True, check=True).stdout == TEXT.encode()
