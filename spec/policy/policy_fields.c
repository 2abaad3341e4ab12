/* SPDX-License-Identifier: Apache-2.0 */
/* The policy file's field table (policy_fields.h) and its reference page. */
#include <stdio.h>
#include <string.h>

#include "../../lib/util.h"
#include "policy.h"
#include "policy_fields.h"

const struct policy_field policy_fields[] = {
	{ "mode", false,
	  "`enforce` (the default), `audit` (every change computed and logged, none applied) or `off` (a plain OCI runtime, as runc)" },
	{ "source", false,
	  "where the policy came from (`policy show` prints it; ignored in a file)" },
	{ "onRequestAboveFloor", false,
	  "`refuse` (the default: a spec asking for more than the floor is refused, naming the field that would allow it) or `clamp` (given the floor instead, logged)" },
	{ "auditLog", false,
	  "the JSON-lines audit log, default `/var/log/agentsbx/policy.log`; `\"\"`: none" },
	{ "networkAllowed", false,
	  "`false` (the default): no connection out; `true`: egress except `denyCidrs`" },
	{ "denyCidrs", true,
	  "with `networkAllowed`: ranges egress never reaches (default: link-local and cloud metadata, Azure's wireserver, RFC 1918, unique-local, loopback, CGNAT, every other special-purpose range); each IPv4 range's NAT64 and 6to4 forms, NAT64's local-use prefix, Teredo and IPv4-mapped/-compatible IPv6 are denied with them" },
	{ "egress", false,
	  "egress by name: `{\"allowDomains\", \"denyDomains\", \"ports\", \"hosts\"}` — a container reaches only the names listed (exact, or `*.suffix`), on `ports` (default 80, 443), through a proxy of the runtime's that resolves them on the host (`hosts`: pinned addresses) and refuses what `denyCidrs` holds; `denyDomains` wins; none listed (the default): off. A container narrows it with the annotation `agentsbx.egress.allow=a,b`" },
	{ "allowCidrs", false,
	  "ranges that win over `denyCidrs` (a cluster's pod and service CIDRs, its DNS); none by default" },
	{ "readonlyRoot", false,
	  "the image is never written (default `true`)" },
	{ "writableLayer", false,
	  "bytes (default 33554432): a root the spec leaves writable becomes an overlay of the read-only image and a tmpfs of this size; `0`: a plain read-only root" },
	{ "tmpfs", true,
	  "`[{\"path\", \"size\"}]`: tmpfs mounts every container gets, or whose size is capped (default `/tmp`, 32 MiB)" },
	{ "maskedPaths", true,
	  "paths under /proc and /sys masked in every container" },
	{ "readonlyPaths", true,
	  "paths under /proc and /sys made read-only in every container" },
	{ "bindPrefixes", true,
	  "host directories bind sources may come from, besides the engine's own directories for this container (default: `docker-init` only)" },
	{ "bindSpecialFiles", true,
	  "sockets, FIFOs and device nodes that may be bind sources (none by default)" },
	{ "bindVolumeDirs", true,
	  "directories whose `<name>/_data` may be bound (volumes), added per engine" },
	{ "rootfsPrefixes", true,
	  "where `root.path` may be besides inside the bundle or an engine's image layer (none by default)" },
	{ "seccompListeners", true,
	  "unix sockets `linux.seccomp.listenerPath` may name: the runtime connects to it as root and hands it the container's seccomp fd (none by default)" },
	{ "dockerHook", true,
	  "the dockerd binaries Docker's own `libnetwork-setkey` hook may come from" },
	{ "hookRules", true,
	  "the other hook commands allowed: `[{\"path\", \"kinds\", \"args\", \"env\"}]`, argv and env as globs (`${id}`: the container's id); `LD_*` is refused whatever a rule says" },
	{ "writableBinds", false,
	  "writable directory binds allowed (unbounded host disk use); off by default" },
	{ "idmappedMounts", false,
	  "`idmap`/`ridmap` binds allowed (files of other owners become the container's); off by default" },
	{ "capabilities", true,
	  "the capabilities a container may keep (none by default)" },
	{ "noNewPrivileges", false,
	  "`no_new_privs` for every process (default `true`)" },
	{ "strictSeccomp", false,
	  "the agent seccomp allowlist stacked on the spec's own profile (default `true`)" },
	{ "defaultDevicesOnly", false,
	  "only the default device nodes, and a device cgroup to match (default `true`)" },
	{ "realtimeScheduling", false,
	  "SCHED_FIFO/RR/DEADLINE, IOPRIO_CLASS_RT and RLIMIT_RTPRIO allowed (off by default)" },
	{ "uid", false,
	  "with `identities` off: the uid and gid a process the spec runs as host root runs as (default 65534); `null` keeps root" },
	{ "identities", false,
	  "`{\"first\", \"count\"}` (default 1879048192, 65536): every container without a user namespace of its own (every pod: its containers share one) runs as a host uid and gid of its own from this range, whatever uid the spec names, with no supplementary groups; taken at create, given back at delete; `null`: off (`uid` applies)" },
	{ "limits", false,
	  "`{memory, pids, cpuQuota, cpuPeriod, rlimitCpu, rlimitFsize, rlimitNofile, ptys}`: filled in where missing, a cap where asked above" },
	{ "relaxable", true,
	  "rules a spec may relax (`writableRoot`, ...); none by default" },
	{ "extend", false,
	  "`{LIST-FIELD: [...]}`: adds to the lists in force, defaults included, instead of replacing them" },
};
const unsigned policy_n_fields = sizeof(policy_fields) / sizeof(policy_fields[0]);

char *policy_fields_markdown(void)
{
	size_t cap = 4096, len = 0;
	char *out = xmalloc(cap);
	static const char head[] =
		"# The policy file's fields\n\n"
		"Generated by `agentsbx policy fields` from the policy's own field table\n"
		"(`spec/policy/policy_fields.h`); `make docs` writes this page and `make lint`\n"
		"checks that it is up to date. The defaults in full: `agentsbx policy show`\n"
		"([policy.json.example](../policy.json.example)); the rules they set:\n"
		"[policy.md](policy.md).\n\n"
		"A list field (`extend`: yes) given as a key of its own *replaces* the\n"
		"default list; the same key under `extend` *adds* to the list in force.\n\n"
		"| field | extend | what it does |\n|---|---|---|\n";

	len = (size_t)snprintf(out, cap, "%s", head);
	for (unsigned i = 0; i < policy_n_fields; i++) {
		const struct policy_field *f = &policy_fields[i];
		size_t need = strlen(f->key) + strlen(f->doc) + 32;

		if (len + need >= cap) {
			cap = (len + need) * 2;
			out = xrealloc(out, cap);
		}
		len += (size_t)snprintf(out + len, cap - len, "| `%s` | %s | %s |\n", f->key,
					f->extendable ? "yes" : "no", f->doc);
	}
	return out;
}
