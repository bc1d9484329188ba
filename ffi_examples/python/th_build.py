"""PEP 517 build backend for the `th` Python package.

`build_wheel` runs `cargo build --release --lib` in the repository root (two directories up), so
the library comes from the repository's own target directory (CARGO_TARGET_DIR is honoured) and
an up-to-date release build is reused as is. `pip install -C profile=dev ./ffi_examples/python`
(or TH_CARGO_PROFILE=dev) builds with another cargo profile instead. TH_LIBRARY=/path/to/libth.so packages a library built
elsewhere instead. The wheel holds the `th` package plus `th/libth.so`, tagged py3-none-<platform>
(ctypes bindings do not depend on the Python version).

The packaged library is stripped (`objcopy --strip-unneeded`: no debug sections, no local
symbols; the exported ones stay), as distributions package theirs. Its debug info is not in the
wheel: with `-C debug-info-dir=DIR` (or TH_DEBUG_INFO_DIR=DIR) it is written to
`DIR/libth.so.debug` and the packaged library gets a `.gnu_debuglink` naming it (gdb finds it
beside the installed `th/libth.so`, in a `.debug/` folder there, or under its
debug-file-directory); otherwise it stays in the unstripped library of the build tree.
Without objcopy the library is packaged as built.
"""

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

NAME = "th"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Python bindings (ctypes) for libth, a tensor engine with Torch TH's C ABI
License: BSD-3-Clause
Requires-Python: >=3.9
Provides-Extra: numpy
Requires-Dist: numpy; extra == "numpy"
Provides-Extra: test
Requires-Dist: numpy; extra == "test"
Requires-Dist: pytest; extra == "test"
"""


def _platform_tag():
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _tag():
    return f"py3-none-{_platform_tag()}"


def _profile(config_settings):
    """The cargo profile: `release` unless `-C profile=NAME` (pip's --config-settings) or
    TH_CARGO_PROFILE says otherwise (`dev` reuses a debug build, as the test command does)."""
    profile = (config_settings or {}).get("profile") or os.environ.get("TH_CARGO_PROFILE") or "release"
    if not profile.replace("-", "").replace("_", "").isalnum():
        raise RuntimeError(f"bad cargo profile name {profile!r}")
    return profile


def _library(config_settings=None):
    given = os.environ.get("TH_LIBRARY")
    if given:
        if not os.path.isfile(given):
            raise RuntimeError(f"TH_LIBRARY={given} does not exist")
        return given
    cargo = os.environ.get("CARGO", "cargo")
    profile = _profile(config_settings)
    print(f"th_build: {cargo} build --profile {profile} --lib (in {ROOT})", file=sys.stderr)
    subprocess.run([cargo, "build", "--profile", profile, "--lib"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    if not os.path.isabs(target):
        target = os.path.join(ROOT, target)
    # cargo's output folder: `debug` for the dev profile, the profile's name otherwise
    lib = os.path.join(target, "debug" if profile in ("dev", "test") else profile, "libth.so")
    if not os.path.isfile(lib):
        raise RuntimeError(f"cargo build did not produce {lib}")
    return lib


def _stripped(lib, config_settings=None):
    """The bytes of `lib` stripped, its debug info split off as described in the module docs."""
    objcopy = os.environ.get("OBJCOPY", "objcopy")
    if shutil.which(objcopy) is None:
        print(f"th_build: {objcopy} not found, packaging {lib} unstripped", file=sys.stderr)
        with open(lib, "rb") as f:
            return f.read()
    debug_dir = (config_settings or {}).get("debug-info-dir") or os.environ.get("TH_DEBUG_INFO_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "libth.so")
        cmd = [objcopy, "--strip-unneeded"]
        if debug_dir:
            os.makedirs(debug_dir, exist_ok=True)
            dbg = os.path.join(os.path.abspath(debug_dir), "libth.so.debug")
            subprocess.run([objcopy, "--only-keep-debug", "--compress-debug-sections=zlib", lib, dbg], check=True)
            cmd.append(f"--add-gnu-debuglink={dbg}")
            print(f"th_build: debug info in {dbg}", file=sys.stderr)
        subprocess.run(cmd + [lib, out], check=True)
        with open(out, "rb") as f:
            return f.read()


def _files():
    """(archive name, source path) of every package file."""
    out = []
    pkg = os.path.join(HERE, NAME)
    for dirpath, _dirs, files in os.walk(pkg):
        if "__pycache__" in dirpath:
            continue
        for f in sorted(files):
            if f.endswith((".py", ".typed")):
                full = os.path.join(dirpath, f)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"), full))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info(tag):
    di = f"{NAME}-{VERSION}.dist-info"
    wheel = f"Wheel-Version: 1.0\nGenerator: th_build\nRoot-Is-Purelib: false\nTag: {tag}\n"
    return di, {f"{di}/METADATA": METADATA.encode(), f"{di}/WHEEL": wheel.encode()}


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di, files = _dist_info(_tag())
    for name, data in files.items():
        path = os.path.join(metadata_directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return di


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = _tag()
    lib = _library(config_settings)
    di, meta = _dist_info(tag)
    entries = [(name, open(path, "rb").read()) for name, path in _files()]
    entries.append((f"{NAME}/libth.so", _stripped(lib, config_settings)))
    entries += list(meta.items())
    record = [_record_line(n, d) for n, d in entries] + [f"{di}/RECORD,,"]
    wheel_name = f"{NAME}-{VERSION}-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data, compresslevel=1)  # the library is large; favour speed
        z.writestr(f"{di}/RECORD", "\n".join(record) + "\n")
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "th_build.py"] + [n for n, _ in _files()]:
            t.add(os.path.join(HERE, rel), arcname=f"{base}/{rel}")
        pkg_info = METADATA.encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    return name


