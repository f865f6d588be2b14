// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Load test for libsofthca-rdmav34.so against the installed libibverbs.
 *
 *   load_test dlopen PROVIDER.so   dlopen it with RTLD_NOW (every private
 *                                  symbol must bind at IBVERBS_PRIVATE_34)
 *                                  and run its constructor
 *   load_test list [NAME...]       ibv_get_device_list() must list exactly
 *                                  these devices, each a CA matched by the
 *                                  softhca provider
 *   load_test netlink              exit 0 if RDMA netlink works here (then
 *                                  libibverbs ignores $SYSFS_PATH)
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>

#include <infiniband/verbs.h>

static int do_dlopen(const char *path)
{
	void *h;

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "load_test: dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	/* A provider exports nothing. */
	if (dlsym(h, "verbs_provider_softhca") || dlsym(h, "shca_register_driver")) {
		fprintf(stderr, "load_test: %s exports symbols\n", path);
		return 1;
	}
	printf("dlopen %s: ok\n", path);
	return 0;
}

static int do_list(int n, char **names)
{
	struct ibv_device **list;
	int i, j, num, err = 0;

	list = ibv_get_device_list(&num);
	if (!list) {
		fprintf(stderr, "load_test: ibv_get_device_list: %s\n",
			strerror(errno));
		return 1;
	}
	for (i = 0; i < num; i++) {
		const char *name = ibv_get_device_name(list[i]);
		int expected = 0;

		for (j = 0; j < n; j++)
			if (!strcmp(names[j], name))
				expected = 1;
		printf("device %s node_type %s transport %d ibdev_path %s: %s\n",
		       name, ibv_node_type_str(list[i]->node_type),
		       list[i]->transport_type, list[i]->ibdev_path,
		       expected ? "expected" : "NOT EXPECTED");
		if (!expected || list[i]->node_type != IBV_NODE_CA ||
		    list[i]->transport_type != IBV_TRANSPORT_IB)
			err = 1;
	}
	for (j = 0; j < n; j++) {
		int found = 0;

		for (i = 0; i < num; i++)
			if (!strcmp(names[j], ibv_get_device_name(list[i])))
				found = 1;
		if (!found) {
			printf("device %s: MISSING\n", names[j]);
			err = 1;
		}
	}
	ibv_free_device_list(list);
	return err;
}

static int do_netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);

	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "dlopen"))
		return do_dlopen(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "list"))
		return do_list(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "netlink"))
		return do_netlink();
	fprintf(stderr, "usage: %s dlopen PROVIDER.so | list [NAME...] | netlink\n",
		argv[0]);
	return 2;
}
