#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#define P(n,x) printf("%s=%d\n",n,(int)(x))
#define M (2ull<<20)
typedef CUmemGenericAllocationHandle H;
CUmemAllocationProp pr(int lt,int id,int ht){CUmemAllocationProp p;memset(&p,0,sizeof p);p.type=1;p.location.type=lt;p.location.id=id;p.requestedHandleTypes=ht;return p;}
int main(){CUcontext c;cuInit(0);cuDevicePrimaryCtxRetain(&c,0);cuCtxSetCurrent(c);
CUmemAllocationProp p=pr(1,0,1),q;H h,h2,h3;size_t g;CUdeviceptr v,v2,b;size_t s;unsigned long long f;
P("gran_null_prop",cuMemGetAllocationGranularity(&g,0,0));
q=pr(3,0,0);P("gran_numa",cuMemGetAllocationGranularity(&g,&q,0));P("g",g>>10);q=pr(2,0,0);P("gran_host",cuMemGetAllocationGranularity(&g,&q,1));P("g",g>>10);
P("cr_1m",cuMemCreate(&h,M/2,&p,0));P("cr_0",cuMemCreate(&h,0,&p,0));P("cr_nullprop",cuMemCreate(&h,M,0,0));P("cr_flags",cuMemCreate(&h,M,&p,1));
q=pr(1,9,0);P("cr_dev9",cuMemCreate(&h,M,&q,0));q=pr(0,0,0);P("cr_locnone",cuMemCreate(&h,M,&q,0));q=pr(1,0,0);q.type=2;P("cr_managed",cuMemCreate(&h,M,&q,0));
q=pr(1,0,8);P("cr_fabric",cuMemCreate(&h,M,&q,0));q=pr(2,0,1);P("cr_host_fd",cuMemCreate(&h,M,&q,0));
q=pr(4,0,0);P("cr_numacur",cuMemCreate(&h,M,&q,0));
size_t f0,f1,t;cuMemGetInfo(&f0,&t);P("cr",cuMemCreate(&h,2*M,&p,0));cuMemGetInfo(&f1,&t);P("info_delta_mib",(f0-f1)>>20);
P("res_1m",cuMemAddressReserve(&v,M/2,0,0,0));P("res_0",cuMemAddressReserve(&v,0,0,0,0));P("res_al3",cuMemAddressReserve(&v,M,3,0,0));
P("res",cuMemAddressReserve(&v,4*M,0,0,0));
P("map_off1m",cuMemMap(v,M,M/2,h,0));P("map_sz3m",cuMemMap(v,3*M,0,h,0));P("map_unres",cuMemMap(0x100000000000ull,M,0,h,0));
P("map",cuMemMap(v,2*M,0,h,0));P("map_again",cuMemMap(v,2*M,0,h,0));P("map_overlap",cuMemMap(v+M,2*M,0,h,0));
CUmemLocation l={1,0};f=99;P("getacc",cuMemGetAccess(&f,&l,v));P("f",f);char buf[64]={1};
P("htod_noacc",cuMemcpyHtoD(v,buf,64));P("dtoh_noacc",cuMemcpyDtoH(buf,v,64));P("memset_noacc",cuMemsetD8(v,0,64));
CUmemAccessDesc a={{1,0},3};P("setacc_part",cuMemSetAccess(v,M,&a,1));P("setacc",cuMemSetAccess(v,2*M,&a,1));cuMemGetAccess(&f,&l,v);P("f",f);
CUmemAccessDesc ah={{2,0},3};P("setacc_host_on_dev",cuMemSetAccess(v,2*M,&ah,1));
P("htod",cuMemcpyHtoD(v,buf,64));P("gar",cuMemGetAddressRange(&b,&s,v+100));P("gar_b",b==v);P("gar_s",s>>20);
unsigned mt=0;P("pt",cuPointerGetAttribute(&mt,2,v));P("mt",mt);P("pt_rs",cuPointerGetAttribute(&s,12,v));P("rs",s>>20);
P("ret_unmapped",cuMemRetainAllocationHandle(&h2,(void*)(v+3*M)));P("ret",cuMemRetainAllocationHandle(&h2,(void*)(v+100)));P("same",h2==h);
P("exp_noreq",cuMemExportToShareableHandle(&t,h,1,0));int fd=-5;q=pr(1,0,1);cuMemCreate(&h3,M,&q,0);P("exp",cuMemExportToShareableHandle(&fd,h3,1,0));
P("exp_fabric",cuMemExportToShareableHandle(buf,h3,8,0));
P("imp_self",cuMemImportFromShareableHandle(&h2,(void*)(long)fd,1));P("same",h2==h3);P("fd_open",fcntl(fd,F_GETFD)!=-1);
P("imp_m1",cuMemImportFromShareableHandle(&h2,(void*)(long)-1,1));int mf=memfd_create("x",0);ftruncate(mf,M);P("imp_memfd",cuMemImportFromShareableHandle(&h2,(void*)(long)mf,1));
P("imp_closed",cuMemImportFromShareableHandle(&h2,(void*)(long)999,1));P("imp_wrongtype",cuMemImportFromShareableHandle(&h2,(void*)(long)fd,2));
P("unmap_part",cuMemUnmap(v,M));P("free_mapped",cuMemAddressFree(v,4*M));P("rel",cuMemRelease(h));P("rel2",cuMemRelease(h));P("dtoh_released",cuMemcpyDtoH(buf,v,64));P("b0",buf[0]);
P("unmap",cuMemUnmap(v,2*M));P("unmap2",cuMemUnmap(v,2*M));P("free_part",cuMemAddressFree(v,M));P("free",cuMemAddressFree(v,4*M));P("free2",cuMemAddressFree(v,4*M));
P("rel_0",cuMemRelease(0));P("props_dead",cuMemGetAllocationPropertiesFromHandle(&q,h));
q=pr(3,0,0);cuMemCreate(&h,M,&q,0);cuMemAddressReserve(&v,M,0,0,0);cuMemMap(v,M,0,h,0);P("hacc",cuMemSetAccess(v,M,&ah,1));ah.location.type=3;P("hnacc",cuMemSetAccess(v,M,&ah,1));
l.type=2;cuMemGetAccess(&f,&l,v);P("hf",f);cuPointerGetAttribute(&mt,2,v);P("hmt",mt);P("h_htod",cuMemcpyHtoD(v,buf,64));P("hrel_garb",cuMemRelease(0x1234));return 0;}
