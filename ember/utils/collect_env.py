"""``ember.utils.collect_env``: a report of the environment (versions of ember, Python, NumPy, CuPy, the OS, CUDA),
for bug reports. ``python -m ember.utils.collect_env`` prints it."""
import collections
import importlib.metadata
import locale
import platform
import sys

__all__ = ["get_env_info", "get_pretty_env_info", "main"]

SystemEnv = collections.namedtuple("SystemEnv", [
    "torch_version", "is_debug_build", "cuda_compiled_version", "os", "libc_version", "python_version",
    "python_platform", "is_cuda_available", "cuda_runtime_version", "cpu_info", "pip_packages"])


def _packages():
    names = ("ember", "numpy", "cupy", "scipy", "numba", "ml_dtypes", "safetensors")
    found = []
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name in names or name.startswith("cupy-cuda"):
            found.append(f"{name}=={dist.version}")
    return "\n".join(sorted(set(found))) or "Could not collect"


def get_env_info():
    """The environment as a ``SystemEnv`` named tuple."""
    import ember
    cuda = ember.cuda.is_available()
    libc = " ".join(platform.libc_ver()).strip() or "N/A"
    return SystemEnv(
        torch_version=ember.__version__, is_debug_build="False",
        cuda_compiled_version=ember.version.cuda or "N/A", os=f"{platform.system()} {platform.release()} "
        f"({platform.machine()})", libc_version=libc,
        python_version=f"{sys.version.replace(chr(10), ' ')} ({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=platform.platform(), is_cuda_available=str(cuda),
        cuda_runtime_version=ember.version.cuda if cuda else "N/A",
        cpu_info=f"{platform.processor() or platform.machine()}, {ember.get_num_threads()} threads",
        pip_packages=_packages())


def get_pretty_env_info():
    """The environment as readable text, one ``name: value`` a line."""
    e = get_env_info()
    return "\n".join([
        f"ember version: {e.torch_version}", f"Is debug build: {e.is_debug_build}",
        f"CUDA used to build ember: {e.cuda_compiled_version}", "", f"OS: {e.os}", f"Libc version: {e.libc_version}",
        "", f"Python version: {e.python_version}", f"Python platform: {e.python_platform}",
        f"Is CUDA available: {e.is_cuda_available}", f"CUDA runtime version: {e.cuda_runtime_version}", "",
        f"CPU: {e.cpu_info}", f"Locale: {locale.getlocale()[0]}", "", "Versions of relevant libraries:",
        e.pip_packages])


def main():
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
