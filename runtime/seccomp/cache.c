/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The on-disk cache of compiled seccomp programs.
 *
 * One file per program in <root>/.seccomp-cache, named by the hex SHA-256 key:
 *
 *   struct cache_header (magic, format, insn count, key, SHA-256 of insns)
 *   struct sock_filter[count]
 *
 * The key covers a canonical serialisation of everything in the profile
 * that shapes the BPF (not the JSON text: spacing and key order do not
 * matter; listenerPath, listenerMetadata and flags are not in the BPF and
 * are left out so that per-container metadata does not defeat the cache),
 * plus libseccomp's version and API level, the native arch, the seccomp
 * actions the kernel offers, the runtime version and this file's format.
 * SHA-256 so that a crafted profile cannot be made to collide with a
 * cached one and inherit its program.
 *
 * The header repeats the key and carries a digest of the program: an entry
 * that is truncated, bit-flipped, written by another version or planted
 * under another key's name is a miss, and the profile is recompiled.  The
 * directory is root's, 0700, never followed through a symlink, and entries
 * are written to a temp file and renamed, so readers never see half a file.
 * The number of entries is capped (SECCOMP_CACHE_MAX_ENTRIES): a stream of
 * distinct profiles evicts the oldest rather than filling /run.
 */
#define SECCOMP_NO_COMPAT_NAMES /* we include libseccomp's <seccomp.h> */
#include "seccomp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

#ifndef AGENTSBX_VERSION
#define AGENTSBX_VERSION "unknown"
#endif
#ifndef AGENTSBX_COMMIT
#define AGENTSBX_COMMIT "unknown"
#endif

/* A temp file this old belongs to a runtime that died mid-write. */
#define TMP_STALE_SEC 60
#define TMP_PREFIX ".tmp-"

/* Bump when the file layout or the code generation in seccomp.c changes. */
#define CACHE_FORMAT 1u
static const char cache_magic[8] = { 'A', 'S', 'B', 'X', 'S', 'C', 'M', 'P' };

struct cache_header {
	char magic[8];
	uint32_t format;
	uint32_t n_insns;
	uint8_t key[SECCOMP_KEY_SIZE];
	uint8_t digest[SECCOMP_KEY_SIZE]; /* SHA-256 of the instructions */
};

/* ---- SHA-256 (FIPS 180-4) ------------------------------------------------ */

static const uint32_t sha256_k[64] = {
	0x428a2f98,
	0x71374491,
	0xb5c0fbcf,
	0xe9b5dba5,
	0x3956c25b,
	0x59f111f1,
	0x923f82a4,
	0xab1c5ed5,
	0xd807aa98,
	0x12835b01,
	0x243185be,
	0x550c7dc3,
	0x72be5d74,
	0x80deb1fe,
	0x9bdc06a7,
	0xc19bf174,
	0xe49b69c1,
	0xefbe4786,
	0x0fc19dc6,
	0x240ca1cc,
	0x2de92c6f,
	0x4a7484aa,
	0x5cb0a9dc,
	0x76f988da,
	0x983e5152,
	0xa831c66d,
	0xb00327c8,
	0xbf597fc7,
	0xc6e00bf3,
	0xd5a79147,
	0x06ca6351,
	0x14292967,
	0x27b70a85,
	0x2e1b2138,
	0x4d2c6dfc,
	0x53380d13,
	0x650a7354,
	0x766a0abb,
	0x81c2c92e,
	0x92722c85,
	0xa2bfe8a1,
	0xa81a664b,
	0xc24b8b70,
	0xc76c51a3,
	0xd192e819,
	0xd6990624,
	0xf40e3585,
	0x106aa070,
	0x19a4c116,
	0x1e376c08,
	0x2748774c,
	0x34b0bcb5,
	0x391c0cb3,
	0x4ed8aa4a,
	0x5b9cca4f,
	0x682e6ff3,
	0x748f82ee,
	0x78a5636f,
	0x84c87814,
	0x8cc70208,
	0x90befffa,
	0xa4506ceb,
	0xbef9a3f7,
	0xc67178f2,
};

static inline uint32_t ror32(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(struct sha256_ctx *c, const uint8_t *p)
{
	uint32_t w[64], s[8];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^
			      (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(s, c->h, sizeof(s));
	for (int i = 0; i < 64; i++) {
		uint32_t e = s[4], a = s[0];
		uint32_t t1 = s[7] + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
			      ((e & s[5]) ^ (~e & s[6])) + sha256_k[i] + w[i];
		uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
			      ((a & s[1]) ^ (a & s[2]) ^ (s[1] & s[2]));
		memmove(&s[1], &s[0], 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		c->h[i] += s[i];
}

void sha256_init(struct sha256_ctx *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
					0xa54ff53a, 0x510e527f, 0x9b05688c,
					0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof(iv));
	c->nbytes = 0;
	c->nbuf = 0;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	const uint8_t *p = data;

	c->nbytes += len;
	if (c->nbuf) {
		size_t n = sizeof(c->buf) - c->nbuf;
		if (n > len)
			n = len;
		memcpy(c->buf + c->nbuf, p, n);
		c->nbuf += n;
		p += n;
		len -= n;
		if (c->nbuf < sizeof(c->buf))
			return;
		sha256_block(c, c->buf);
		c->nbuf = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		sha256_block(c, p);
	memcpy(c->buf, p, len);
	c->nbuf = len;
}

void sha256_final(struct sha256_ctx *c, uint8_t out[SECCOMP_KEY_SIZE])
{
	uint64_t bits = c->nbytes * 8;
	uint8_t pad[72] = { 0x80 };
	size_t padlen = (c->nbuf < 56 ? 56 : 120) - c->nbuf;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, pad, padlen + 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
}

void seccomp_key_hex(const uint8_t key[SECCOMP_KEY_SIZE],
		     char out[SECCOMP_KEY_HEX_SIZE])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < SECCOMP_KEY_SIZE; i++) {
		out[2 * i] = hex[key[i] >> 4];
		out[2 * i + 1] = hex[key[i] & 15];
	}
	out[2 * SECCOMP_KEY_SIZE] = '\0';
}

/* ---- canonical serialisation --------------------------------------------- */

/*
 * Every item is a one-byte tag followed by a fixed-size or length-prefixed
 * body, so two different structs can never produce the same byte stream
 * (no "ab"+"c" == "a"+"bc" ambiguity, no absent-vs-empty confusion).
 */
static void ser_u64(struct sha256_ctx *c, char tag, uint64_t v)
{
	uint8_t b[9] = { (uint8_t)tag };

	for (int i = 0; i < 8; i++)
		b[1 + i] = (uint8_t)(v >> (8 * i));
	sha256_update(c, b, sizeof(b));
}

static void ser_str(struct sha256_ctx *c, const char *s)
{
	if (!s) {
		ser_u64(c, 'N', 0);
		return;
	}
	size_t n = strlen(s);
	ser_u64(c, 'S', n);
	sha256_update(c, s, n);
}

static void ser_opt(struct sha256_ctx *c, const struct opt_u64 *o)
{
	ser_u64(c, o->set ? 'O' : 'o', o->set ? o->v : 0);
}

static void ser_strv(struct sha256_ctx *c, const struct str_array *a)
{
	ser_u64(c, 'A', a->len);
	for (size_t i = 0; i < a->len; i++)
		ser_str(c, a->items[i]);
}

static void ser_syscall(struct sha256_ctx *c, const struct oci_seccomp_syscall *s)
{
	ser_u64(c, 'R', 0);
	ser_strv(c, &s->names);
	ser_str(c, s->action);
	ser_opt(c, &s->errno_ret);
	ser_u64(c, 'A', s->n_args);
	for (size_t i = 0; i < s->n_args; i++) {
		ser_u64(c, 'i', s->args[i].index);
		ser_u64(c, 'v', s->args[i].value);
		ser_u64(c, 'w', s->args[i].value_two);
		ser_str(c, s->args[i].op);
	}
}

static const char *test_lib_version;

void seccomp_cache_test_set_lib_version(const char *version)
{
	test_lib_version = version;
}

/* Bit i set: the kernel offers action i of the list below. */
static uint32_t kernel_actions_mask(void)
{
	static const uint32_t acts[] = {
		SECCOMP_RET_KILL_PROCESS,
		SECCOMP_RET_KILL_THREAD,
		SECCOMP_RET_TRAP,
		SECCOMP_RET_ERRNO,
		SECCOMP_RET_USER_NOTIF,
		SECCOMP_RET_TRACE,
		SECCOMP_RET_LOG,
		SECCOMP_RET_ALLOW,
	};
	static uint32_t mask;
	static bool done;

	if (done)
		return mask;
	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		uint32_t a = acts[i];
		if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &a) == 0)
			mask |= 1u << i;
	}
	done = true;
	return mask;
}

/* What, besides the profile, decides the program libseccomp emits. */
static void ser_environment(struct sha256_ctx *c)
{
	const struct scmp_version *v = seccomp_version();
	char libver[64];

	snprintf(libver, sizeof(libver), "%u.%u.%u", v->major, v->minor,
		 v->micro);
	ser_str(c, "agentsbx-seccomp-cache");
	ser_u64(c, 'F', CACHE_FORMAT);
	ser_str(c, AGENTSBX_VERSION);
	ser_str(c, AGENTSBX_COMMIT);
	ser_str(c, test_lib_version ? test_lib_version : libver);
	ser_u64(c, 'L', seccomp_api_get());
	ser_u64(c, 'H', seccomp_arch_native());
	ser_u64(c, 'K', kernel_actions_mask());
	/* A weak build (tests only) never shares an entry with another build:
	 * what it weakens may be the profile's parse or a built-in profile. */
#ifdef AGENTSBX_WEAKEN
	ser_str(c, AGENTSBX_WEAKEN);
#else
	ser_str(c, "");
#endif
}

void seccomp_cache_key(const struct oci_seccomp *sc,
		       uint8_t key[SECCOMP_KEY_SIZE])
{
	struct sha256_ctx c;

	sha256_init(&c);
	ser_environment(&c);
	ser_str(&c, sc->default_action);
	ser_opt(&c, &sc->default_errno_ret);
	ser_strv(&c, &sc->architectures);
	ser_u64(&c, 'A', sc->n_syscalls);
	for (size_t i = 0; i < sc->n_syscalls; i++)
		ser_syscall(&c, &sc->syscalls[i]);
	sha256_final(&c, key);
}

void seccomp_text_key(const char *variant, const char *text, uint8_t key[SECCOMP_KEY_SIZE])
{
	struct sha256_ctx c;

	sha256_init(&c);
	ser_environment(&c);
	ser_str(&c, "built-in profile");
	ser_str(&c, variant);
	ser_str(&c, text);
	sha256_final(&c, key);
}

/* ---- the directory ------------------------------------------------------- */

static int check_private(const struct stat *st, const char *what,
			 const char *path, struct error *err)
{
	if (st->st_uid != geteuid())
		return error_set(err, "%s %s is owned by uid %u, not %u", what,
				 path, (unsigned)st->st_uid,
				 (unsigned)geteuid());
	if (st->st_mode & 077)
		return error_set(err, "%s %s has mode %04o, want no group or "
				      "other access",
				 what, path,
				 (unsigned)(st->st_mode & 07777));
	return 0;
}

int seccomp_cache_open_dir(const char *path, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(path);
	_cleanup_close_ int parent = -1;
	_cleanup_close_ int fd = -1;
	const char *base;
	struct stat st;
	char *slash;
	size_t n = strlen(copy);

	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	slash = strrchr(copy, '/');
	if (!slash) {
		parent = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		base = copy;
	} else {
		*slash = '\0';
		parent = open(slash == copy ? "/" : copy,
			      O_PATH | O_DIRECTORY | O_CLOEXEC);
		base = slash + 1;
	}
	if (parent < 0)
		return error_sys(err, "open parent of %s", path);
	if (!*base)
		return error_set(err, "bad cache directory %s", path);
	if (mkdirat(parent, base, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "mkdir %s", path);
	/* O_NOFOLLOW: a symlink planted in place of the directory is refused
	 * (ELOOP), not followed somewhere an attacker controls. */
	fd = openat(parent, base,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, "open %s", path);
	if (fstat(fd, &st) < 0)
		return error_sys(err, "stat %s", path);
	if (check_private(&st, "cache directory", path, err) < 0)
		return -1;
	return take_fd(fd);
}

/* ---- entries ------------------------------------------------------------- */

static void digest_insns(const struct sock_filter *insns, unsigned short len,
			 uint8_t out[SECCOMP_KEY_SIZE])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, insns, (size_t)len * sizeof(*insns));
	sha256_final(&c, out);
}

static int read_exact(int fd, void *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t r = pread(fd, buf, len, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf = (char *)buf + r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

/* Open and vet one entry; the reason for a miss goes to *why. */
static int open_entry(int dirfd, const char *name, const char **why,
		      struct stat *st)
{
	struct error e;
	int fd = openat(dirfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		*why = errno == ENOENT ? "absent" : "cannot open";
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		*why = "not a regular file";
		goto bad;
	}
	if (check_private(st, "cache entry", name, &e) < 0) {
		*why = "not private to the runtime";
		goto bad;
	}
	return fd;
bad:
	close(fd);
	return -1;
}

int seccomp_cache_load(int dirfd, const uint8_t key[SECCOMP_KEY_SIZE],
		       struct sock_filter **insns, unsigned short *len)
{
	char name[SECCOMP_KEY_HEX_SIZE];
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct sock_filter *prog = NULL;
	struct cache_header h;
	uint8_t digest[SECCOMP_KEY_SIZE];
	const char *why = "corrupt";
	struct stat st;

	seccomp_key_hex(key, name);
	fd = open_entry(dirfd, name, &why, &st);
	if (fd < 0)
		goto miss;
	if (read_exact(fd, &h, sizeof(h), 0) < 0 ||
	    memcmp(h.magic, cache_magic, sizeof(cache_magic)) != 0 ||
	    h.format != CACHE_FORMAT)
		goto miss;
	if (memcmp(h.key, key, SECCOMP_KEY_SIZE) != 0) {
		why = "key mismatch";
		goto miss;
	}
	if (h.n_insns == 0 || h.n_insns > BPF_MAXINSNS ||
	    (uint64_t)st.st_size !=
		    sizeof(h) + (uint64_t)h.n_insns * sizeof(*prog))
		goto miss;
	prog = xcalloc(h.n_insns, sizeof(*prog));
	if (read_exact(fd, prog, h.n_insns * sizeof(*prog), sizeof(h)) < 0)
		goto miss;
	digest_insns(prog, (unsigned short)h.n_insns, digest);
	if (memcmp(digest, h.digest, sizeof(digest)) != 0) {
		why = "digest mismatch";
		goto miss;
	}
	*insns = take_ptr(prog);
	*len = (unsigned short)h.n_insns;
	return 0;
miss:
	log_debug("seccomp: cache miss %s (%s)", name, why);
	return -1;
}

static bool older(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec != b->st_mtim.tv_sec ?
		       a->st_mtim.tv_sec < b->st_mtim.tv_sec :
		       a->st_mtim.tv_nsec < b->st_mtim.tv_nsec;
}

/*
 * Before adding an entry: drop stale temp files, and when the cache is full
 * the entry written longest ago (hits do not write, so this is FIFO, not
 * LRU: good enough for a handful of live profiles).  Only on a miss, which
 * costs milliseconds of compiling anyway.
 */
static void cache_prune(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char oldest[NAME_MAX + 1] = "";
	struct stat oldest_st = { 0 };
	time_t now = time(NULL);
	struct dirent *de;
	size_t n = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (str_has_prefix(de->d_name, TMP_PREFIX)) {
			if (now - st.st_mtim.tv_sec > TMP_STALE_SEC)
				unlinkat(dirfd, de->d_name, 0);
			continue;
		}
		n++;
		if (!*oldest || older(&st, &oldest_st)) {
			snprintf(oldest, sizeof(oldest), "%s", de->d_name);
			oldest_st = st;
		}
	}
	closedir(d);
	if (n >= SECCOMP_CACHE_MAX_ENTRIES && *oldest) {
		log_debug("seccomp: cache full, evicting %s", oldest);
		unlinkat(dirfd, oldest, 0);
	}
}

int seccomp_cache_store(int dirfd, const uint8_t key[SECCOMP_KEY_SIZE],
			const struct sock_filter *insns, unsigned short len,
			struct error *err)
{
	char name[SECCOMP_KEY_HEX_SIZE], tmp[SECCOMP_KEY_HEX_SIZE + 32];
	struct cache_header h = { .format = CACHE_FORMAT, .n_insns = len };
	_cleanup_close_ int fd = -1;

	memcpy(h.magic, cache_magic, sizeof(h.magic));
	memcpy(h.key, key, SECCOMP_KEY_SIZE);
	digest_insns(insns, len, h.digest);
	seccomp_key_hex(key, name);
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s-%d", name, (int)getpid());
	cache_prune(dirfd);

	for (int tries = 0; tries < 2; tries++) {
		fd = openat(dirfd, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* Left by a crashed runtime whose pid we now have. */
		unlinkat(dirfd, tmp, 0);
	}
	if (fd < 0)
		return error_sys(err, "create cache entry %s", tmp);
	if (write_all(fd, &h, sizeof(h)) < 0 ||
	    write_all(fd, insns, (size_t)len * sizeof(*insns)) < 0) {
		error_sys(err, "write cache entry %s", tmp);
		goto fail;
	}
	/* No fsync: the cache lives on tmpfs in practice, and a torn entry
	 * after a crash fails the size or digest check and is recompiled. */
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		error_sys(err, "rename cache entry to %s", name);
		goto fail;
	}
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	return -1;
}
