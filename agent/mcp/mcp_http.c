/* SPDX-License-Identifier: Apache-2.0 */
#include "mcp_private.h"
int mcp_http_serve(struct mcp_server *s, struct error *err)
{
	return error_set(err, "not yet");
}
