#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#define P(n,x) printf("%s=%d\n",n,(int)(x))
#define M (2ull<<20)
#define C(n,e) q=pr(1,0,0);e;P(n,cuMemCreate(&h,M,&q,0));
typedef CUmemGenericAllocationHandle H;
CUmemAllocationProp pr(int lt,int id,int ht){CUmemAllocationProp p;memset(&p,0,sizeof p);p.type=1;p.location.type=lt;p.location.id=id;p.requestedHandleTypes=ht;return p;}
int main(){CUcontext c;cuInit(0);cuDevicePrimaryCtxRetain(&c,0);cuCtxSetCurrent(c);
CUmemAllocationProp p=pr(1,0,1),q;H h,h2;CUdeviceptr v,w;size_t s,g;unsigned long long f,u;int fd,i;char b[64]={0};
C("cr_comp",q.allocFlags.compressionType=1)C("cr_rdma",q.allocFlags.gpuDirectRDMACapable=1)C("cr_usage",q.allocFlags.usage=0xffff)C("cr_rsv",q.allocFlags.reserved[0]=1)
C("cr_w32",q.requestedHandleTypes=2)C("cr_x10",q.requestedHandleTypes=0x10)C("cr_numa99",q.location.type=3;q.location.id=99)
P("cr_huge",cuMemCreate(&h,1ull<<46,&p,0));q=pr(1,0,0);P("gr_opt7",cuMemGetAllocationGranularity(&g,&q,7));q=pr(1,99,0);P("gr_d99",cuMemGetAllocationGranularity(&g,&q,0));
q=pr(1,0,0);q.type=2;P("gr_man",cuMemGetAllocationGranularity(&g,&q,0));
P("res_fl",cuMemAddressReserve(&v,M,0,0,1));P("res_a4k",cuMemAddressReserve(&v,M,4096,0,0));P("res_a64m",cuMemAddressReserve(&v,M,32*M,0,0));P("al",v%(64ull<<20)==0);
w=v+64*M;P("res_hint",cuMemAddressReserve(&v,M,0,w,0));P("hint_ok",v==w);
cuMemAddressReserve(&v,8*M,0,0,0);cuMemCreate(&h,2*M,&p,0);P("map_part",cuMemMap(v,M,0,h,0));P("map_fl",cuMemMap(v+2*M,2*M,0,h,1));P("map_twice",cuMemMap(v+4*M,2*M,0,h,0));
CUmemAccessDesc a={{1,0},1};P("acc_ro",cuMemSetAccess(v,M,&a,1));P("htod_ro",cuMemcpyHtoD(v,b,64));P("dtoh_ro",cuMemcpyDtoH(b,v,64));
a.location.id=99;a.flags=3;P("acc_d99",cuMemSetAccess(v,M,&a,1));a.location.id=0;a.location.type=0;P("acc_none",cuMemSetAccess(v,M,&a,1));a.location.type=1;a.flags=2;P("acc_f2",cuMemSetAccess(v,M,&a,1));
P("acc_null",cuMemSetAccess(v,M,0,1));a.flags=3;P("acc_c0",cuMemSetAccess(v,M,&a,0));cuMemSetAccess(v,M,&a,1);
CUmemLocation l={1,99};P("ga_d99",cuMemGetAccess(&f,&l,v));l.id=0;P("ga_null",cuMemGetAccess(0,&l,v));
int at[]={1,9,14,16,10,19,7,17,20,15,13};for(i=0;i<11;i++){u=0xdeadbeefdeadbeefull;int r=cuPointerGetAttribute(&u,at[i],v+100);printf("attr%d=%d v=%llx\n",at[i],r,u==v?1ull:u);}
P("exp_fl",cuMemExportToShareableHandle(&fd,h,1,1));P("exp_w32",cuMemExportToShareableHandle(&fd,h,2,0));P("exp_0",cuMemExportToShareableHandle(&fd,h,0,0));
P("exp",cuMemExportToShareableHandle(&fd,h,1,0));P("cloexec",fcntl(fd,F_GETFD));P("imp_x10",cuMemImportFromShareableHandle(&h2,(void*)(long)fd,0x10));
cuMemGetAllocationPropertiesFromHandle(&q,h);P("pht",q.requestedHandleTypes);P("plt",q.location.type);
P("rel",cuMemRelease(h));P("ret",cuMemRetainAllocationHandle(&h2,(void*)v));P("same",h2==h);P("props",cuMemGetAllocationPropertiesFromHandle(&q,h2));
P("unmap_mis",cuMemUnmap(v+M,2*M));P("unmap_unres",cuMemUnmap(0x100000000000ull,M));P("free0",cuMemAddressFree(0,M));
cuCtxSetCurrent(0);P("nc_cr",cuMemCreate(&h2,M,&p,0));P("nc_res",cuMemAddressReserve(&w,M,0,0,0));P("nc_map",cuMemMap(v+6*M,2*M,0,h,0));P("nc_acc",cuMemSetAccess(v+6*M,2*M,&a,1));
P("nc_gran",cuMemGetAllocationGranularity(&g,&p,0));P("nc_unmap",cuMemUnmap(v+6*M,2*M));return 0;}
