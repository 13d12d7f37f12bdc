#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#define P(n,x) printf("%s=%d\n",n,(int)(x))
#define M (2ull<<20)
typedef CUmemGenericAllocationHandle H;
CUmemAllocationProp pr(int lt,int id,int ht){CUmemAllocationProp p;memset(&p,0,sizeof p);p.type=1;p.location.type=lt;p.location.id=id;p.requestedHandleTypes=ht;return p;}
int main(){CUcontext c;cuInit(0);cuDevicePrimaryCtxRetain(&c,0);cuCtxSetCurrent(c);
CUmemAllocationProp p=pr(1,0,0),q;H h,h2,h3;CUdeviceptr v,w,d;size_t s;unsigned long long f;int fd=-7;char b[64]={0};
cuMemCreate(&h,M,&p,0);P("exp_noreq",cuMemExportToShareableHandle(&fd,h,1,0));P("fd",fd);
q=pr(2,0,0);P("cr_host0",cuMemCreate(&h2,M,&q,0));q=pr(3,0,1);P("cr_numafd",cuMemCreate(&h2,M,&q,0));
cuMemAddressReserve(&v,8*M,0,0,0);P("unmap_never",cuMemUnmap(v,M));CUmemLocation l={1,0};P("getacc_unmapped",cuMemGetAccess(&f,&l,v));
P("map_sz1m",cuMemMap(v,M/2,0,h,0));P("map_misal",cuMemMap(v+M/2,M,0,h,0));CUmemAccessDesc a={{1,0},3};P("setacc_unres",cuMemSetAccess(0x100000000000ull,M,&a,1));
P("free_unres",cuMemAddressFree(0x100000000000ull,M));cuMemAlloc(&d,64);P("ret_malloc",cuMemRetainAllocationHandle(&h3,(void*)d));
cuMemCreate(&h3,M,&p,0);P("m1",cuMemMap(v,M,0,h,0));P("m2",cuMemMap(v+M,M,0,h3,0));P("acc2",cuMemSetAccess(v,2*M,&a,1));P("acc1",cuMemSetAccess(v+M,M,&a,1));
P("mapped_attr",cuPointerGetAttribute(&f,13,v+2*M));P("rs_attr",cuPointerGetAttribute(&w,11,v+M));P("rs_eq",w==v);cuPointerGetAttribute(&s,12,v+M);P("rs",s>>20);
P("gar2",cuMemGetAddressRange(&w,&s,v+M));P("garb",w==v+M);P("gars",s>>20);P("blk",cuPointerGetAttribute(&s,18,v+M));P("msz",s>>20);
P("unmap2",cuMemUnmap(v,2*M));q=pr(3,0,0);cuMemCreate(&h2,M,&q,0);cuMemMap(v,M,0,h2,0);P("h_htod_noacc",cuMemcpyHtoD(v,b,64));l.type=2;f=9;P("hgetacc",cuMemGetAccess(&f,&l,v));P("hf",f);
size_t f0,f1,t;cuMemGetInfo(&f0,&t);q=pr(3,0,0);cuMemCreate(&h3,8*M,&q,0);cuMemGetInfo(&f1,&t);P("hinfo",(f0-f1)>>20);
CUmemAccessDesc ad={{1,0},3};P("hacc_dev",cuMemSetAccess(v,M,&ad,1));P("h_htod",cuMemcpyHtoD(v,b,64));P("h_dtod",cuMemcpyDtoD(v,v+32,8));f=9;P("hgetacc",cuMemGetAccess(&f,&l,v));P("hf",f);
unsigned mt;P("hmt",cuPointerGetAttribute(&mt,2,v));P("mt",mt);P("hhp",cuPointerGetAttribute(&w,4,v));P("hhp_eq",w==v);
CUmemAccessDesc ar={{1,0},1};P("acc_ro",cuMemSetAccess(v,M,&ar,1));P("rel1",cuMemRelease(h2));P("unmapH",cuMemUnmap(v,M));P("rel_again",cuMemRelease(h2));
CUmemoryPool pl;CUmemPoolProps pp;memset(&pp,0,sizeof pp);pp.allocType=1;pp.handleTypes=1;pp.location.type=1;cuMemPoolCreate(&pl,&pp);int pf=-1;cuMemPoolExportToShareableHandle(&pf,pl,1,0);
P("imp_poolfd",cuMemImportFromShareableHandle(&h3,(void*)(long)pf,1));P("imp_fdnone",cuMemImportFromShareableHandle(&h3,(void*)(long)pf,0));
q=pr(1,0,1);cuMemCreate(&h3,M,&q,0);cuMemExportToShareableHandle(&fd,h3,1,0);H hi;P("imp",cuMemImportFromShareableHandle(&hi,(void*)(long)fd,1));
cuMemGetAllocationPropertiesFromHandle(&q,hi);P("iht",q.requestedHandleTypes);P("ilt",q.location.type);P("ifl",q.allocFlags.gpuDirectRDMACapable);P("imp0",cuMemImportFromShareableHandle(&hi,(void*)(long)fd,0));
P("exp_imp",cuMemExportToShareableHandle(&pf,hi,1,0));P("rel_imp",cuMemRelease(hi));P("rel_imp2",cuMemRelease(hi));return 0;}
