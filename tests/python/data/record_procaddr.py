"""Records how libcuda.so.1 resolves every cu* function of cuda.bindings.driver at CUDA 13.0.

Run on a GPU machine against NVIDIA's driver to (re)make procaddr_580.txt:
    python3 record_procaddr.py > procaddr_580.txt
Each line: NAME found | NAME <CUresult>/<symbolStatus>.
"""
from cuda.bindings import driver as cu


def main():
    err, = cu.cuInit(0)
    err_v, version = cu.cuDriverGetVersion()
    print(f"# cuGetProcAddress(name, 13000, 0) per cuda.bindings.driver function; driver version {version}")
    for name in sorted(n for n in dir(cu) if n.startswith("cu") and n[2].isupper() and callable(getattr(cu, n))):
        err, pfn, status = cu.cuGetProcAddress(name.encode(), 13000, 0)
        answer = "found" if (err == cu.CUresult.CUDA_SUCCESS and pfn) else f"{int(err)}/{int(status)}"
        print(name, answer)


if __name__ == "__main__":
    main()
