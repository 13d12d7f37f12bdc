// Launch attributes (sm_90 and later): clusters, launch bounds, required block sizes, and a
// parameter too large for the older parameter-info record.
extern "C" __global__ void __cluster_dims__(2, 1, 1) k_cluster(int* p) { p[0] = 1; }
extern "C" __global__ void __launch_bounds__(128, 2) k_lb2(int* p) { p[threadIdx.x] = 2; }
extern "C" __global__ void __block_size__((64, 2, 1)) k_block(int* p) { p[threadIdx.x] = 3; }
extern "C" __global__ void __block_size__((32, 1, 1), (4, 1, 1)) k_block_cluster(int* p) { p[threadIdx.x] = 3; }
extern "C" __global__ void __launch_bounds__(96, 1, 4) k_lb3(int* p) { p[threadIdx.x] = 2; }
struct Big { int v[5000]; };
extern "C" __global__ void k_big(char c, Big b, int* p) { p[0] = b.v[4999] + c; }
