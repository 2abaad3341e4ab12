/* SPDX-License-Identifier: Apache-2.0 */
/* placeholder */
#include "mcp_private.h"

void mcp_fixtures_list_tools(struct mcp_server *s, yajl_gen g)
{
	(void)s;
	(void)g;
}

int mcp_fixtures_call(struct mcp_conn *conn, const struct mcp_id *id, yajl_val params)
{
	return 0;
}

int mcp_fixtures_method(struct mcp_conn *conn, const struct mcp_id *id, const char *method,
			yajl_val params)
{
	return 0;
}

void mcp_fixtures_run(struct mcp_call *c)
{
	(void)c;
}

void mcp_fixtures_capabilities(struct mcp_server *s, yajl_gen g)
{
}
