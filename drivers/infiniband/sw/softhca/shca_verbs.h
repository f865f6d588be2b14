/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - interfaces between the verbs layer, the engines and the
 * module glue.
 */
#ifndef SHCA_VERBS_H
#define SHCA_VERBS_H

#include <kunit/visibility.h>

#include "shca.h"

struct net_device;

/* shca_verbs.c */
void shca_verbs_init_device(struct shca_dev *sdev, struct net_device *ndev);
enum ib_port_state shca_port_state(struct net_device *ndev);

/* shca_main.c */
void shca_dev_release(struct shca_dev *sdev);
/* reached by the KUnit suites to create devices */
#if IS_ENABLED(CONFIG_KUNIT)
int shca_newlink(const char *ibdev_name, struct net_device *ndev);
#endif

/* shca_mr.c: the memory-registration engine */
void shca_mr_table_init(struct shca_dev *sdev);
void shca_mr_table_destroy(struct shca_dev *sdev);
struct shca_mr *shca_mr_alloc(struct shca_dev *sdev, enum ib_mr_type type,
			      int access);
void shca_mr_publish(struct shca_mr *mr);
void shca_mr_destroy(struct shca_mr *mr);
void shca_mr_init_dma(struct shca_mr *mr);
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key);
void shca_mr_put(struct shca_mr *mr);

#endif /* SHCA_VERBS_H */
