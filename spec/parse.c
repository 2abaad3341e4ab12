/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.json -> struct oci_spec: the top level (version, root, mounts,
 * hooks, annotations) and the entry points.  The process and linux sections
 * are in parse_process.c and parse_linux.c.
 *
 * The parser checks JSON types, integer ranges and the members the structs
 * cannot represent as absent; meaning is spec_validate()'s job.  Unknown
 * members are ignored (forward compatibility), and so are the sections of
 * other platforms (windows, solaris, vm, zos, freebsd).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/util.h"
#include "internal.h"

static int parse_root(struct jctx *c, yajl_val v, void *out)
{
	struct oci_root *r = out;

	if (jstring(c, v, "path", &r->path) < 0 ||
	    jbool(c, v, "readonly", &r->readonly) < 0)
		return -1;
	return 0;
}

static int parse_mount(struct jctx *c, yajl_val v, void *out)
{
	struct oci_mount *m = out;

	if (jstring(c, v, "destination", &m->destination) < 0 ||
	    jstring(c, v, "type", &m->type) < 0 ||
	    jstring(c, v, "source", &m->source) < 0 ||
	    jstr_array(c, v, "options", &m->options) < 0 ||
	    JOBJECT_ARRAY(c, v, "uidMappings", jparse_id_mapping,
			  m->uid_mappings, m->n_uid_mappings) < 0 ||
	    JOBJECT_ARRAY(c, v, "gidMappings", jparse_id_mapping,
			  m->gid_mappings, m->n_gid_mappings) < 0)
		return -1;
	return 0;
}

static int parse_hook(struct jctx *c, yajl_val v, void *out)
{
	struct oci_hook *h = out;

	if (jstring(c, v, "path", &h->path) < 0 ||
	    jstr_array(c, v, "args", &h->args) < 0 ||
	    jstr_array(c, v, "env", &h->env) < 0 ||
	    jopt_i64(c, v, "timeout", INT64_MIN, INT64_MAX, &h->timeout) < 0)
		return -1;
	h->has_env = jmember(v, "env") && !YAJL_IS_NULL(jmember(v, "env"));
	return 0;
}

static int parse_hooks(struct jctx *c, yajl_val v, void *out)
{
	struct oci_hook_list *lists = out;

	for (int k = 0; k < HOOK_KIND_MAX; k++)
		if (JOBJECT_ARRAY(c, v, hook_kind_name(k), parse_hook,
				  lists[k].items, lists[k].len) < 0)
			return -1;
	return 0;
}

static int parse_document(struct jctx *c, yajl_val v, struct oci_spec *s)
{
	if (jcheck_object(c, v) < 0)
		return -1;
	if (jstring(c, v, "ociVersion", &s->oci_version) < 0 ||
	    jobject(c, v, "process", jparse_process, &s->process,
		    &s->has_process) < 0 ||
	    jobject(c, v, "root", parse_root, &s->root, NULL) < 0 ||
	    jstring(c, v, "hostname", &s->hostname) < 0 ||
	    jstring(c, v, "domainname", &s->domainname) < 0 ||
	    JOBJECT_ARRAY(c, v, "mounts", parse_mount, s->mounts, s->n_mounts) <
		    0 ||
	    jobject(c, v, "hooks", parse_hooks, s->hooks, NULL) < 0 ||
	    jstr_map(c, v, "annotations", &s->annotations) < 0 ||
	    jobject(c, v, "linux", jparse_linux, &s->linux, &s->has_linux) < 0)
		return -1;
	return 0;
}

int spec_parse(const char *buf, size_t len, struct oci_spec *out,
	       struct error *err)
{
	struct jctx c;
	yajl_val root;
	int rc;

	memset(out, 0, sizeof(*out));
	if (spec_json_load(buf, len, "config.json", &root, err) < 0)
		return -1;
	jctx_init(&c, "config.json", err);
	rc = parse_document(&c, root, out);
	yajl_tree_free(root);
	if (rc < 0)
		spec_free(out);
	return rc;
}

int spec_parse_process(const char *buf, size_t len, struct oci_process *out,
		       struct error *err)
{
	struct jctx c;
	yajl_val root;
	int rc;

	memset(out, 0, sizeof(*out));
	if (spec_json_load(buf, len, "process.json", &root, err) < 0)
		return -1;
	jctx_init(&c, "process.json", err);
	rc = jcheck_object(&c, root);
	if (rc == 0)
		rc = jparse_process(&c, root, out);
	yajl_tree_free(root);
	if (rc < 0)
		process_free(out);
	return rc;
}

int spec_parse_resources(const char *buf, size_t len, struct oci_resources *out,
			 struct error *err)
{
	struct jctx c;
	yajl_val root;
	int rc;

	memset(out, 0, sizeof(*out));
	if (spec_json_load(buf, len, "resources", &root, err) < 0)
		return -1;
	jctx_init(&c, "resources", err);
	rc = jcheck_object(&c, root);
	if (rc == 0)
		rc = jparse_resources(&c, root, out);
	yajl_tree_free(root);
	if (rc == 0) {
		out->present = true;
		rc = spec_check_resources(out, err);
	}
	if (rc < 0)
		resources_free(out);
	return rc;
}

/* A FIFO or a device in place of config.json must not hang or flood us. */
static int read_regular_file(const char *path, char **buf, size_t *len,
			     struct error *err)
{
	_cleanup_close_ int fd = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return error_sys(err, "open %s", path);
	return read_regular_fd(fd, path, SPEC_MAX_FILE_SIZE, buf, len, err);
}

int spec_load_file(const char *path, struct oci_spec *out, struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	if (read_regular_file(path, &buf, &len, err) < 0)
		return -1;
	return spec_parse(buf, len, out, err);
}
