// Parameter roles: how each table entry's arguments are made, from the parameter's type
// category and name (fuzz_gen.hpp). Pointers the driver dereferences get memory of this
// program, sized as the ABI says (or NULL); handles and addresses the driver looks up get
// anything. A void-like pointer no rule names stops the harness at start-up.
#include <cctype>
#include <map>

#include "fuzz_gen.hpp"

namespace fz {
namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// (entry base name, parameter) -> role, where the name alone would mislead.
const std::map<std::pair<std::string, std::string>, Role> kOverride = {
    // cuMemcpy infers each side's memory from the address: a wild one is the program's memory.
    {{"cuMemcpy", "dst"}, Role::uni_ptr}, {{"cuMemcpy", "src"}, Role::uni_ptr},
    {{"cuMemcpyAsync", "dst"}, Role::uni_ptr}, {{"cuMemcpyAsync", "src"}, Role::uni_ptr},
    // arrays and their lengths
    {{"cuModuleEnumerateFunctions", "functions"}, Role::out_array},
    {{"cuModuleEnumerateFunctions", "numFunctions"}, Role::count},
    {{"cuLibraryEnumerateKernels", "kernels"}, Role::out_array},
    {{"cuLibraryEnumerateKernels", "numKernels"}, Role::count},
    {{"cuMemPoolSetAccess", "map"}, Role::in_array}, {{"cuMemPoolSetAccess", "count"}, Role::count},
    {{"cudaMemPoolSetAccess", "descList"}, Role::in_array}, {{"cudaMemPoolSetAccess", "count"}, Role::count},
    {{"cuMemSetAccess", "desc"}, Role::in_array}, {{"cuMemSetAccess", "count"}, Role::count},
    // inputs passed through non-const pointers
    {{"cuCtxCreate", "ctxCreateParams"}, Role::in},
    {{"cuMemGetDefaultMemPool", "location"}, Role::in}, {{"cuMemGetMemPool", "location"}, Role::in},
    {{"cuMemSetMemPool", "location"}, Role::in}, {{"cuMemPoolGetAccess", "location"}, Role::in},
    {{"cudaMemGetDefaultMemPool", "location"}, Role::in}, {{"cudaMemGetMemPool", "location"}, Role::in},
    {{"cudaMemSetMemPool", "location"}, Role::in}, {{"cudaMemPoolGetAccess", "location"}, Role::in},
    {{"cuMemPoolImportPointer", "shareData"}, Role::in}, {{"cudaMemPoolImportPointer", "exportData"}, Role::in},
    // buffers whose size another parameter or the attribute gives
    {{"cuPointerGetAttribute", "data"}, Role::out64}, {{"cuPointerSetAttribute", "value"}, Role::in64},
    {{"cuMemRangeGetAttribute", "data"}, Role::out_bytes}, {{"cudaMemRangeGetAttribute", "data"}, Role::out_bytes},
    {{"cuLogicalEndpointExport", "handle"}, Role::out64}, {{"cuLogicalEndpointImport", "handle"}, Role::in64},
    {{"__cudaPopCallConfiguration", "stream"}, Role::out8},
    // a handful of ids, never an array
    {{"cuLogicalEndpointIdReserve", "count"}, Role::small}, {{"cuLogicalEndpointIdRelease", "count"}, Role::small},
    {{"cuLogicalEndpointQuery", "count"}, Role::small},
    // the JIT linker's options: an array of numOptions (its values array has no rule: NULL, so a
    // non-zero count is refused before either array is read)
    {{"cuLinkCreate", "numOptions"}, Role::count}, {{"cuLinkCreate", "options"}, Role::in_array},
    {{"cuLinkCreate_v2", "numOptions"}, Role::count}, {{"cuLinkCreate_v2", "options"}, Role::in_array},
    {{"cuLinkAddData", "numOptions"}, Role::count}, {{"cuLinkAddData", "options"}, Role::in_array},
    {{"cuLinkAddData_v2", "numOptions"}, Role::count}, {{"cuLinkAddData_v2", "options"}, Role::in_array},
    {{"cuLinkAddFile", "numOptions"}, Role::count}, {{"cuLinkAddFile", "options"}, Role::in_array},
    {{"cuLinkAddFile_v2", "numOptions"}, Role::count}, {{"cuLinkAddFile_v2", "options"}, Role::in_array},
    {{"cuLinkCreate", "optionValues"}, Role::null}, {{"cuLinkCreate_v2", "optionValues"}, Role::null},
    {{"cuLinkAddData", "optionValues"}, Role::null}, {{"cuLinkAddData_v2", "optionValues"}, Role::null},
    {{"cuLinkAddFile", "optionValues"}, Role::null}, {{"cuLinkAddFile_v2", "optionValues"}, Role::null},
    // the input's bytes: NULL (a pointer and a size the harness could not pair would be read past)
    {{"cuLinkAddData", "data"}, Role::null}, {{"cuLinkAddData_v2", "data"}, Role::null},
    {{"cuLinkAddFile", "path"}, Role::path}, {{"cuLinkAddFile_v2", "path"}, Role::path},
    {{"cuLinkComplete", "cubinOut"}, Role::out8},
    // host memory to pin
    {{"cuMemHostRegister", "p"}, Role::reg_host}, {{"cudaHostRegister", "ptr"}, Role::reg_host},
    // graphs: node lists and their lengths; lists read back only as a count (NULL arrays)
    {{"cuGraphAddEmptyNode", "dependencies"}, Role::in_array}, {{"cuGraphAddEmptyNode", "numDependencies"}, Role::count},
    {{"cuGraphAddHostNode", "dependencies"}, Role::in_array}, {{"cuGraphAddHostNode", "numDependencies"}, Role::count},
    {{"cuGraphAddKernelNode", "dependencies"}, Role::in_array}, {{"cuGraphAddKernelNode", "numDependencies"}, Role::count},
    {{"cuGraphAddMemcpyNode", "dependencies"}, Role::in_array}, {{"cuGraphAddMemcpyNode", "numDependencies"}, Role::count},
    {{"cuGraphAddMemsetNode", "dependencies"}, Role::in_array}, {{"cuGraphAddMemsetNode", "numDependencies"}, Role::count},
    {{"cuGraphAddChildGraphNode", "dependencies"}, Role::in_array},
    {{"cuGraphAddChildGraphNode", "numDependencies"}, Role::count},
    {{"cuGraphAddEventRecordNode", "dependencies"}, Role::in_array},
    {{"cuGraphAddEventRecordNode", "numDependencies"}, Role::count},
    {{"cuGraphAddEventWaitNode", "dependencies"}, Role::in_array},
    {{"cuGraphAddEventWaitNode", "numDependencies"}, Role::count},
    {{"cuGraphAddMemAllocNode", "dependencies"}, Role::in_array},
    {{"cuGraphAddMemAllocNode", "numDependencies"}, Role::count},
    {{"cuGraphAddMemFreeNode", "dependencies"}, Role::in_array}, {{"cuGraphAddMemFreeNode", "numDependencies"}, Role::count},
    {{"cuGraphAddExternalSemaphoresSignalNode", "dependencies"}, Role::in_array},
    {{"cuGraphAddExternalSemaphoresSignalNode", "numDependencies"}, Role::count},
    {{"cuGraphAddExternalSemaphoresWaitNode", "dependencies"}, Role::in_array},
    {{"cuGraphAddExternalSemaphoresWaitNode", "numDependencies"}, Role::count},
    {{"cuGraphAddNode", "dependencies"}, Role::in_array}, {{"cuGraphAddNode", "dependencyData"}, Role::in_array},
    {{"cuGraphAddNode", "numDependencies"}, Role::count},
    {{"cuGraphAddDependencies", "from"}, Role::in_array}, {{"cuGraphAddDependencies", "to"}, Role::in_array},
    {{"cuGraphAddDependencies", "edgeData"}, Role::in_array},
    {{"cuGraphAddDependencies", "numDependencies"}, Role::count},
    {{"cuGraphRemoveDependencies", "from"}, Role::in_array}, {{"cuGraphRemoveDependencies", "to"}, Role::in_array},
    {{"cuGraphRemoveDependencies", "edgeData"}, Role::in_array},
    {{"cuGraphRemoveDependencies", "numDependencies"}, Role::count},
    {{"cuStreamBeginCaptureToGraph", "dependencies"}, Role::in_array},
    {{"cuStreamBeginCaptureToGraph", "dependencyData"}, Role::in_array},
    {{"cuStreamBeginCaptureToGraph", "numDependencies"}, Role::count},
    {{"cuStreamUpdateCaptureDependencies", "dependencies"}, Role::in_array},
    {{"cuStreamUpdateCaptureDependencies", "dependencyData"}, Role::in_array},
    {{"cuStreamUpdateCaptureDependencies", "numDependencies"}, Role::count},
    {{"cuGraphGetNodes", "nodes"}, Role::null}, {{"cuGraphGetRootNodes", "rootNodes"}, Role::null},
    {{"cuGraphGetEdges", "from"}, Role::null}, {{"cuGraphGetEdges", "to"}, Role::null},
    {{"cuGraphGetEdges", "edgeData"}, Role::null},
    {{"cuGraphNodeGetDependencies", "dependencies"}, Role::null}, {{"cuGraphNodeGetDependencies", "edgeData"}, Role::null},
    {{"cuGraphNodeGetDependentNodes", "dependentNodes"}, Role::null},
    {{"cuGraphNodeGetDependentNodes", "edgeData"}, Role::null},
    {{"cuGraphInstantiate", "logBuffer"}, Role::null},
    // a graph's copies run at each launch, later: only memory that outlives them (NULL here)
    {{"cuGraphAddMemcpyNode", "copyParams"}, Role::null}, {{"cuGraphMemcpyNodeSetParams", "nodeParams"}, Role::null},
    {{"cuGraphExecMemcpyNodeSetParams", "copyParams"}, Role::null},
    {{"cudaGraphAddMemcpyNode1D", "dst"}, Role::null}, {{"cudaGraphAddMemcpyNode1D", "src"}, Role::null},
    // the dot file: no path (a file the harness would write)
    {{"cuGraphDebugDotPrint", "path"}, Role::null}, {{"cudaGraphDebugDotPrint", "path"}, Role::null},
    {{"cuDeviceGetGraphMemAttribute", "value"}, Role::out8}, {{"cuDeviceSetGraphMemAttribute", "value"}, Role::in64},
    {{"cudaDeviceGetGraphMemAttribute", "value"}, Role::out8}, {{"cudaDeviceSetGraphMemAttribute", "value"}, Role::in64},
    {{"cudaGraphAddMemFreeNode", "dptr"}, Role::dev_ptr}, {{"cudaGraphMemFreeNodeGetParams", "dptr_out"}, Role::out8},
    {{"cuUserObjectCreate", "ptr"}, Role::user_data},
    // the runtime's forms
    {{"cudaGraphAddEmptyNode", "pDependencies"}, Role::in_array}, {{"cudaGraphAddEmptyNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddHostNode", "pDependencies"}, Role::in_array}, {{"cudaGraphAddHostNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddKernelNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddKernelNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddMemcpyNode1D", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddMemcpyNode1D", "numDependencies"}, Role::count},
    {{"cudaGraphAddMemsetNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddMemsetNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddChildGraphNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddChildGraphNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddEventRecordNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddEventRecordNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddEventWaitNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddEventWaitNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddMemAllocNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddMemAllocNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddMemFreeNode", "pDependencies"}, Role::in_array},
    {{"cudaGraphAddMemFreeNode", "numDependencies"}, Role::count},
    {{"cudaGraphAddDependencies", "from"}, Role::in_array}, {{"cudaGraphAddDependencies", "to"}, Role::in_array},
    {{"cudaGraphAddDependencies", "edgeData"}, Role::in_array},
    {{"cudaGraphAddDependencies", "numDependencies"}, Role::count},
    {{"cudaGraphRemoveDependencies", "from"}, Role::in_array}, {{"cudaGraphRemoveDependencies", "to"}, Role::in_array},
    {{"cudaGraphRemoveDependencies", "edgeData"}, Role::in_array},
    {{"cudaGraphRemoveDependencies", "numDependencies"}, Role::count},
    {{"cudaStreamBeginCaptureToGraph", "dependencies"}, Role::in_array},
    {{"cudaStreamBeginCaptureToGraph", "dependencyData"}, Role::in_array},
    {{"cudaStreamBeginCaptureToGraph", "numDependencies"}, Role::count},
    {{"cudaStreamUpdateCaptureDependencies", "dependencies"}, Role::in_array},
    {{"cudaStreamUpdateCaptureDependencies", "dependencyData"}, Role::in_array},
    {{"cudaStreamUpdateCaptureDependencies", "numDependencies"}, Role::count},
    {{"cudaGraphGetNodes", "nodes"}, Role::null}, {{"cudaGraphGetRootNodes", "pRootNodes"}, Role::null},
    {{"cudaGraphGetEdges", "from"}, Role::null}, {{"cudaGraphGetEdges", "to"}, Role::null},
    {{"cudaGraphGetEdges", "edgeData"}, Role::null},
    {{"cudaGraphNodeGetDependencies", "pDependencies"}, Role::null},
    {{"cudaGraphNodeGetDependencies", "edgeData"}, Role::null},
    {{"cudaGraphNodeGetDependentNodes", "pDependentNodes"}, Role::null},
    {{"cudaGraphNodeGetDependentNodes", "edgeData"}, Role::null},
};

Role integer_role(const std::string& n, size_t width) {
  if (n.find("flag") != std::string::npos) return Role::flags;
  static const std::set<std::string> dev = {"dev", "device", "peerdev", "ordinal", "peerdevice", "dstdevice", "srcdevice"};
  static const std::set<std::string> ptr = {"dptr", "ptr", "dst", "src", "devptr", "addr", "dstdevice", "srcdevice"};
  // Devices are ints (CUdevice), addresses unsigned long long (CUdeviceptr): the same names.
  if (ptr.count(n) && width == 8) return Role::dev_ptr;
  if (dev.count(n) && width == 4) return Role::dev;
  if (n == "value" && width < 8) return Role::value;
  if (n == "handle" || n == "memhandle") return Role::vmm;
  if (n == "len" || n == "datasize") return Role::len;
  if (n == "leid" || n == "baseleid") return Role::le_id;
  if (n.rfind("griddim", 0) == 0 || n.rfind("blockdim", 0) == 0) return Role::dim;
  if (n == "cudaversion") return Role::version;
  if (n.find("pitch") != std::string::npos) return Role::pitch;
  if (n.find("width") != std::string::npos) return Role::width;
  if (n == "height") return Role::height;
  static const std::set<std::string> bytes = {"bytecount", "bytesize", "size", "count", "n", "length", "minbytestokeep",
                                              "alignment", "offset", "memoffset", "hoffset", "woffset", "value"};
  if (bytes.count(n)) return Role::bytes;
  static const std::set<std::string> small = {"level", "paramindex", "priority", "thread_limit", "ext", "constant",
                                              "global", "elementsizebytes", "sharedmembytes", "sharedmem", "val"};
  if (small.count(n)) return Role::small;
  return Role::value;
}

Role pointer_role(const std::string& n, Cat cat) {
  switch (cat) {
    case Cat::void_ptr:
      if (n == "devptr" || n == "addr" || n == "p" || n == "phost" || n == "ptr") return Role::dev_ptr;
      if (n == "dst") return Role::uni_ptr;
      if (n == "dsthost") return Role::host_out;
      if (n == "userdata") return Role::user_data;
      break;
    case Cat::const_void_ptr:
      if (n == "devptr" || n == "ptr") return Role::dev_ptr;
      if (n == "src") return Role::uni_ptr;
      if (n == "srchost") return Role::host_in;
      if (n == "code" || n == "image" || n == "fatcubin") return Role::image;
      if (n == "func" || n == "hostfun" || n == "entryfuncaddr" || n == "symbolptr") return Role::func;
      if (n == "symbol") return Role::symbol;
      break;
    case Cat::void_ptr_ptr:
      if (n == "args" || n == "kernelparams") return Role::kernel_params;
      if (n == "extra") return Role::extra;
      if (n == "devptr" || n == "funcptr" || n == "pdevice" || n == "phost" || n == "pp" || n == "ptr") return Role::out;
      break;
    case Cat::char_ptr:
      if (n == "name" || n == "pcibusid") return Role::out_bytes;
      break;
    case Cat::const_char_ptr:
      if (n == "fname" || n == "filename") return Role::path;
      if (n == "name") return Role::str;
      if (n == "pcibusid") return Role::bus_id;
      if (n == "symbol") return Role::sym_name;
      break;
    default: break;
  }
  return Role::null;  // no rule
}

}  // namespace

std::vector<std::string> param_names(const char* params) {
  std::vector<std::string> out;
  std::string s(params);
  if (s.size() >= 2) s = s.substr(1, s.size() - 2);  // the parentheses
  if (s == "void" || s.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    std::string p = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t end = p.find_last_not_of(' ');
    size_t begin = end;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(p[begin - 1])) || p[begin - 1] == '_')) --begin;
    out.push_back(p.substr(begin, end - begin + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string base_name(const char* entry) {
  std::string s(entry);
  for (const char* suf : {"_ptsz", "_ptds"})
    if (s.size() > 5 && s.compare(s.size() - 5, 5, suf) == 0) s.resize(s.size() - 5);
  if (s.size() > 3 && s[s.size() - 3] == '_' && s[s.size() - 2] == 'v' && std::isdigit(static_cast<unsigned char>(s.back())))
    s.resize(s.size() - 3);
  return s;
}

Role classify(const char* entry, const std::string& name, Cat cat, size_t width, const char* params) {
  if (auto it = kOverride.find({base_name(entry), name}); it != kOverride.end()) return it->second;
  const std::string n = lower(name);
  switch (cat) {
    case Cat::handle: return Role::handle;
    case Cat::handle_out: case Cat::out_ptr: case Cat::const_char_ptr_ptr: return Role::out;
    case Cat::in_ptr: case Cat::by_value: return Role::in;
    case Cat::function: return Role::callback;
    case Cat::enumeration: return Role::enumeration;
    case Cat::integer: return integer_role(n, width);
    default: {
      Role r = pointer_role(n, cat);
      if (r == Role::null)
        die(entry, "parameter '" + name + "' of " + params + " has no argument rule: add one in tests/fuzz/fuzz_roles.cpp");
      return r;
    }
  }
}

}  // namespace fz
