/* nccl_id.h — NCCL's unique id as text, so that it travels in the rendezvous blob like
 * the cpu backend's shared-mapping path does (backend.h: world_handle / attach_to).
 *
 * Contract: nccl_id_new() asks NCCL for a fresh id (ncclGetUniqueId: no GPU needed) and
 * writes "nccl:" followed by its NCCL_UNIQUE_ID_BYTES bytes in lowercase hex;
 * nccl_id_parse() accepts exactly that form and nothing else.  Both return 0, or -1
 * with err.
 *
 * Ownership: nothing here allocates; `text` and `id` are the caller's, filled in place.
 */
#ifndef DDPPROF_NCCL_ID_H
#define DDPPROF_NCCL_ID_H

#include <stddef.h>

#include <nccl.h>

#define NCCL_ID_TEXT (5 + 2 * NCCL_UNIQUE_ID_BYTES + 1)

int nccl_id_new(char text[NCCL_ID_TEXT], char *err, size_t errlen);
int nccl_id_parse(const char *text, ncclUniqueId *id, char *err, size_t errlen);

#endif
