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
CUmemAllocationProp p=pr(1,0,1),q;H h,h2;CUdeviceptr v,w;size_t s,g;unsigned long long f,u;int fd,i;char b[64]={0};
cuMemAddressReserve(&v,8*M,0,0,0);cuMemCreate(&h,M,&p,0);P("map",cuMemMap(v+2*M,M,0,h,0));w=v+2*M;
CUmemAccessDesc a={{1,0},1};P("acc_ro",cuMemSetAccess(w,M,&a,1));P("htod_ro",cuMemcpyHtoD(w,b,64));P("dtoh_ro",cuMemcpyDtoH(b,w,64));P("set_ro",cuMemsetD8(w,1,64));
a.location.id=99;a.flags=3;P("acc_d99",cuMemSetAccess(w,M,&a,1));a.location.id=0;a.location.type=0;P("acc_none",cuMemSetAccess(w,M,&a,1));a.location.type=4;P("acc_numacur",cuMemSetAccess(w,M,&a,1));a.location.type=1;a.flags=2;P("acc_f2",cuMemSetAccess(w,M,&a,1));
P("acc_null",cuMemSetAccess(w,M,0,1));a.flags=3;P("acc_c0",cuMemSetAccess(w,M,&a,0));a.flags=0;P("acc_none0",cuMemSetAccess(w,M,&a,1));cuMemGetAccess(&f,&a.location,w);P("f",f);a.flags=3;P("acc",cuMemSetAccess(w,M,&a,1));
P("acc_gap",cuMemSetAccess(v,4*M,&a,1));
int at[]={1,9,14,16,10,19,7,17,20,15,13,11,3};for(i=0;i<13;i++){u=0xdeadbeefdeadbeefull;int r=cuPointerGetAttribute(&u,at[i],w+100);printf("attr%d=%d v=%llx\n",at[i],r,u==w?1ull:u==(unsigned long long)c?2ull:u);}
P("rel",cuMemRelease(h));P("ret",cuMemRetainAllocationHandle(&h2,(void*)(w+5)));P("same",h2==h);P("props",cuMemGetAllocationPropertiesFromHandle(&q,h2));
P("unmap_span",cuMemUnmap(v,8*M));P("ret2",cuMemRetainAllocationHandle(&h2,(void*)(w+5)));P("rel2",cuMemRelease(h));P("map_w",cuMemMap(w,M,0,h,0));P("rel3",cuMemRelease(h));
cuMemCreate(&h,M,&p,0);cuMemMap(w,M,0,h,0);P("unmap_mis",cuMemUnmap(w+4096,M));P("unmap_mis2",cuMemUnmap(w,M+4096));P("unmap_ovr",cuMemUnmap(w-M,3*M));
cuMemCreate(&h2,M,&p,0);P("map_oth_res",cuMemMap(v+8*M,M,0,h2,0));w=0;cuMemAddressReserve(&w,2*M,0,0,0);P("free_two",cuMemAddressFree(v,8*M+(w==v+8*M?2*M:0)));P("adj",w==v+8*M);
cuCtxSetCurrent(0);P("nc_map",cuMemMap(v,M,0,h2,0));P("nc_acc",cuMemSetAccess(v,M,&a,1));P("nc_ga",cuMemGetAccess(&f,&a.location,v));P("nc_unmap",cuMemUnmap(v,M));P("nc_rel",cuMemRelease(h2));
P("nc_free",cuMemAddressFree(v,8*M));return 0;}
