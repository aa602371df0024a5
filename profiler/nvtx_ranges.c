/* nvtx_ranges.c — thin wrappers over NVTX3's domain API (header-only, loaded lazily). */
#include "profiler/nvtx_ranges.h"

uint32_t prof_nvtx_colour(span_kind k)
{
    switch (k) {
    case SPAN_FORWARD: return 0xff4c9be8;
    case SPAN_BACKWARD: return 0xff2e7d32;
    case SPAN_COPY_IN:
    case SPAN_COPY_OUT: return 0xff9e9e9e;
    case SPAN_ALLREDUCE: return 0xffe65100;
    case SPAN_OPTIMIZER: return 0xff8e24aa;
    default: return 0xff607d8b;
    }
}

#ifdef DDPPROF_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

void prof_nvtx_init(prof_nvtx *n) { n->domain = nvtxDomainCreateA("ddpprof"); }

void prof_nvtx_destroy(prof_nvtx *n)
{
    if (n->domain)
        nvtxDomainDestroy((nvtxDomainHandle_t)n->domain);
    n->domain = NULL;
}

void prof_nvtx_push(const prof_nvtx *n, const char *msg, uint32_t argb)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    nvtxDomainRangePushEx((nvtxDomainHandle_t)n->domain, &a);
}

void prof_nvtx_pop(const prof_nvtx *n) { nvtxDomainRangePop((nvtxDomainHandle_t)n->domain); }

void prof_nvtx_name_thread(const char *name) { nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), name); }

#else

void prof_nvtx_init(prof_nvtx *n) { n->domain = 0; }
void prof_nvtx_destroy(prof_nvtx *n) { (void)n; }
void prof_nvtx_push(const prof_nvtx *n, const char *msg, uint32_t argb)
{
    (void)n;
    (void)msg;
    (void)argb;
}
void prof_nvtx_pop(const prof_nvtx *n) { (void)n; }
void prof_nvtx_name_thread(const char *name) { (void)name; }

#endif
