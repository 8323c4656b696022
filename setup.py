"""Builds the Python package hwbvh for pip (pyproject.toml): the extension hwbvh._hwbvh is built by the project's
CMake (target hwbvh_python, for the interpreter running pip), the package's Python files come from python/hwbvh."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
VERSION = re.search(r"project\(hwbvh VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython3_EXECUTABLE={sys.executable}", "-DHWBVH_BUILD_PYTHON=ON", "-DHWBVH_BUILD_APPS=OFF",
                     "-DHWBVH_BUILD_BENCH=OFF", "-DBUILD_TESTING=OFF"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("HWBVH_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "hwbvh_python", "-j", jobs], check=True)
        (built,) = (build_dir / "python" / "hwbvh").glob("_hwbvh*.so")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    version=VERSION,
    packages=["hwbvh", "hwbvh.sweep"],
    package_dir={"": "python"},
    ext_modules=[Extension("hwbvh._hwbvh", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}},  # beside, not inside, the CMake build directory build/
)
