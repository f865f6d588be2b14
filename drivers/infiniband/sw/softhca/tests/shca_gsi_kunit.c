// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the GSI QP (QP1): the core's MAD layer creates it when a
 * softhca device registers, and MADs travel through it between devices the
 * way the IB CM's (and so rdma_cm's) do. The tests use the MAD layer's
 * own agent API, as ib_cm and ib_umad do, never softhca internals.
 *
 * shca_gsi: a request/response round trip through ib_mad on one device
 *	and across two, QP1's creation rules, a MAD to a GID nobody owns.
 */

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <kunit/test.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_gsi_mac[2][ETH_ALEN] = {
	{ 0x02, 0x53, 0x48, 0x47, 0x53, 0x01 },
	{ 0x02, 0x53, 0x48, 0x47, 0x53, 0x02 },
};

#define SHCA_GSI_CLASS		IB_MGMT_CLASS_VENDOR_RANGE2_START
#define SHCA_GSI_TIMEOUT_MS	5000
static const u8 shca_gsi_oui[3] = { 0x00, 0x53, 0x48 };

/* One MAD agent and what it saw. */
struct shca_gsi_agent {
	struct ib_mad_agent *agent;
	struct completion recv;		/* a MAD arrived */
	struct completion sent;		/* a send completed */
	struct ib_wc wc;		/* the last receive's completion */
	struct ib_grh grh;		/* ... its GRH area */
	struct ib_vendor_mad mad;	/* ... and the MAD */
	bool matched;			/* ... answered our outstanding send */
	enum ib_wc_status send_status;	/* the last send's status */
	bool respond;			/* answer requests with a response */
};

struct shca_gsi_fix {
	struct ib_device *dev[2];
	struct shca_gsi_agent req;	/* requester, on dev[0] */
	struct shca_gsi_agent resp;	/* responder, on dev[param] */
};

static void shca_gsi_destroy_ah(void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/* An AH on @agent's PD to @dgid, or an error pointer. */
static struct ib_ah *shca_gsi_ah(struct ib_mad_agent *agent,
				 const union ib_gid *dgid)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	union ib_gid gid = *dgid;

	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &gid, 0, 0, 64, 0);
	return rdma_create_ah(agent->qp->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
}

/* Build a vendor MAD to QP1 of @dgid's device; NULL on failure. */
static struct ib_mad_send_buf *shca_gsi_msg(struct ib_mad_agent *agent,
					    const union ib_gid *dgid,
					    u8 method, __be64 tid, u8 seed)
{
	struct ib_mad_send_buf *msg;
	struct ib_vendor_mad *mad;
	struct ib_ah *ah;
	int i;

	ah = shca_gsi_ah(agent, dgid);
	if (IS_ERR(ah))
		return NULL;
	msg = ib_create_send_mad(agent, 1, 0, 0, IB_MGMT_VENDOR_HDR,
				 IB_MGMT_VENDOR_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg)) {
		shca_gsi_destroy_ah(ah);
		return NULL;
	}
	msg->ah = ah;
	mad = msg->mad;
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = SHCA_GSI_CLASS;
	mad->mad_hdr.class_version = 1;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = tid;
	memcpy(mad->oui, shca_gsi_oui, sizeof(shca_gsi_oui));
	for (i = 0; i < IB_MGMT_VENDOR_DATA; i++)
		mad->data[i] = seed + i;
	return msg;
}

static void shca_gsi_free_msg(struct ib_mad_send_buf *msg)
{
	shca_gsi_destroy_ah(msg->ah);
	ib_free_send_mad(msg);
}

static void shca_gsi_send_handler(struct ib_mad_agent *agent,
				  struct ib_mad_send_wc *send_wc)
{
	struct shca_gsi_agent *a = agent->context;

	a->send_status = send_wc->status;
	shca_gsi_free_msg(send_wc->send_buf);
	complete(&a->sent);
}

static void shca_gsi_recv_handler(struct ib_mad_agent *agent,
				  struct ib_mad_send_buf *send_buf,
				  struct ib_mad_recv_wc *recv_wc)
{
	struct shca_gsi_agent *a = agent->context;
	struct ib_mad_send_buf *resp;
	const union ib_gid *sgid;

	a->wc = *recv_wc->wc;
	a->grh = *recv_wc->recv_buf.grh;
	memcpy(&a->mad, recv_wc->recv_buf.mad, sizeof(a->mad));
	a->matched = !!send_buf;
	if (a->respond &&
	    recv_wc->recv_buf.mad->mad_hdr.method == IB_MGMT_METHOD_GET) {
		/* Answer to the GID the request came from (IPv6 GRH). */
		sgid = (const union ib_gid *)&recv_wc->recv_buf.grh->sgid;
		resp = shca_gsi_msg(agent, sgid, IB_MGMT_METHOD_GET_RESP,
				    a->mad.mad_hdr.tid, 0x80);
		if (resp && ib_post_send_mad(resp, NULL))
			shca_gsi_free_msg(resp);
	}
	ib_free_recv_mad(recv_wc);
	complete(&a->recv);
}

static void shca_gsi_unregister(void *agent)
{
	ib_unregister_mad_agent(agent);
}

/* Register @a on @dev; with @method, as the receiver of that method. */
static void shca_gsi_agent_init(struct kunit *test, struct shca_gsi_agent *a,
				struct ib_device *dev, int method)
{
	struct ib_mad_reg_req reg = {
		.mgmt_class = SHCA_GSI_CLASS,
		.mgmt_class_version = 1,
	};

	init_completion(&a->recv);
	init_completion(&a->sent);
	memcpy(reg.oui, shca_gsi_oui, sizeof(shca_gsi_oui));
	if (method >= 0)
		set_bit(method, reg.method_mask);
	a->agent = ib_register_mad_agent(dev, 1, IB_QPT_GSI,
					 method >= 0 ? &reg : NULL, 0,
					 shca_gsi_send_handler,
					 shca_gsi_recv_handler, a, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(a->agent),
			       "ib_register_mad_agent: %ld",
			       PTR_ERR(a->agent));
	shca_kunit_defer(test, shca_gsi_unregister, a->agent);
}

static bool shca_gsi_wait(struct completion *c)
{
	return wait_for_completion_timeout(c,
			msecs_to_jiffies(SHCA_GSI_TIMEOUT_MS)) > 0;
}

/* Fixture: two devices; the requester on dev[0], the responder on dev[param]. */
static int shca_gsi_init(struct kunit *test)
{
	const bool *two = test->param_value;
	struct shca_gsi_fix *f;
	int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	for (i = 0; i < 2; i++) {
		static const char * const names[] = { "shcak_gsi0",
						      "shcak_gsi1" };
		struct net_device *ndev = shca_kunit_netdev(test,
							    shca_gsi_mac[i]);

		f->dev[i] = shca_kunit_device(test, names[i], ndev);
	}
	shca_gsi_agent_init(test, &f->req, f->dev[0], -1);
	shca_gsi_agent_init(test, &f->resp, f->dev[two && *two],
			    IB_MGMT_METHOD_GET);
	test->priv = f;
	return 0;
}

static const bool shca_gsi_where[] = { false, true };

static void shca_gsi_where_desc(const bool *two, char *desc)
{
	strscpy(desc, *two ? "two devices" : "one device",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_gsi_where, shca_gsi_where, shca_gsi_where_desc);

/*
 * A GET goes from QP1 of dev[0] to QP1 of the responder's device, which
 * answers with a GET_RESP; the MAD layer matches the answer to the
 * outstanding request by TID and by the GIDs of its GRH. Both arrivals
 * carry what the CM reads: source QP 1, P_Key index 0, the GRH with the
 * sender's GID, its MAC.
 */
static void shca_gsi_round_trip(struct kunit *test)
{
	struct shca_gsi_fix *f = test->priv;
	struct ib_device *rdev = f->resp.agent->device;
	union ib_gid sgid, dgid;
	struct ib_mad_send_buf *msg;
	__be64 tid;
	int i;

	KUNIT_ASSERT_TRUE(test, rdma_cap_ib_mad(f->dev[0], 1));
	KUNIT_ASSERT_TRUE(test, rdma_cap_ib_cm(f->dev[0], 1));
	KUNIT_EXPECT_EQ(test, f->req.agent->qp->qp_num, 1);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(f->dev[0], 1, 0, &sgid), 0);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(rdev, 1, 0, &dgid), 0);

	f->resp.respond = true;
	tid = cpu_to_be64((u64)f->req.agent->hi_tid << 32 | 0x5348);
	msg = shca_gsi_msg(f->req.agent, &dgid, IB_MGMT_METHOD_GET, tid, 7);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	msg->timeout_ms = SHCA_GSI_TIMEOUT_MS;
	msg->retries = 0;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(msg, NULL), 0);

	/* The request, at the responder. */
	KUNIT_ASSERT_TRUE(test, shca_gsi_wait(&f->resp.recv));
	KUNIT_EXPECT_EQ(test, f->resp.wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, f->resp.wc.qp->qp_num, 1);
	KUNIT_EXPECT_PTR_EQ(test, f->resp.wc.qp->device, rdev);
	KUNIT_EXPECT_EQ(test, f->resp.wc.src_qp, 1);
	KUNIT_EXPECT_EQ(test, f->resp.wc.pkey_index, 0);
	KUNIT_EXPECT_EQ(test, f->resp.wc.byte_len,
			sizeof(struct ib_grh) + IB_MGMT_MAD_SIZE);
	KUNIT_EXPECT_EQ(test, f->resp.wc.wc_flags &
			(IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			 IB_WC_WITH_SMAC | IB_WC_WITH_VLAN),
			IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			IB_WC_WITH_SMAC);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(f->resp.wc.smac,
						 shca_gsi_mac[0]));
	KUNIT_EXPECT_EQ(test, memcmp(&f->resp.grh.sgid, &sgid, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&f->resp.grh.dgid, &dgid, 16), 0);
	KUNIT_EXPECT_FALSE(test, f->resp.matched);
	KUNIT_EXPECT_EQ(test, f->resp.mad.mad_hdr.tid, tid);
	for (i = 0; i < IB_MGMT_VENDOR_DATA; i++)
		if (f->resp.mad.data[i] != (u8)(7 + i))
			break;
	KUNIT_EXPECT_EQ(test, i, IB_MGMT_VENDOR_DATA);

	/* The response, matched to the request; then the request completes. */
	KUNIT_ASSERT_TRUE(test, shca_gsi_wait(&f->req.recv));
	KUNIT_EXPECT_TRUE(test, f->req.matched);
	KUNIT_EXPECT_EQ(test, f->req.mad.mad_hdr.method,
			IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, f->req.mad.data[0], 0x80);
	KUNIT_EXPECT_EQ(test, f->req.wc.src_qp, 1);
	KUNIT_EXPECT_EQ(test, memcmp(&f->req.grh.sgid, &dgid, 16), 0);
	KUNIT_ASSERT_TRUE(test, shca_gsi_wait(&f->req.sent));
	KUNIT_EXPECT_EQ(test, f->req.send_status, IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, shca_gsi_wait(&f->resp.sent));
	KUNIT_EXPECT_EQ(test, f->resp.send_status, IB_WC_SUCCESS);
}

/*
 * A MAD to a GID no device owns is lost, as on a wire: the send itself
 * completes, and a request waiting for its answer times out, on time.
 */
static void shca_gsi_lost(struct kunit *test)
{
	struct shca_gsi_fix *f = test->priv;
	union ib_gid nobody = { .raw = { 0xfe, 0x80, [8] = 0x02, [15] = 0x99 } };
	struct ib_mad_send_buf *msg;
	unsigned long t0;

	msg = shca_gsi_msg(f->req.agent, &nobody, IB_MGMT_METHOD_SEND, 0, 1);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(msg, NULL), 0);
	KUNIT_ASSERT_TRUE(test, shca_gsi_wait(&f->req.sent));
	KUNIT_EXPECT_EQ(test, f->req.send_status, IB_WC_SUCCESS);

	reinit_completion(&f->req.sent);
	msg = shca_gsi_msg(f->req.agent, &nobody, IB_MGMT_METHOD_GET,
			   cpu_to_be64((u64)f->req.agent->hi_tid << 32 | 1),
			   1);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	msg->timeout_ms = 100;
	msg->retries = 1;
	t0 = jiffies;
	KUNIT_ASSERT_EQ(test, ib_post_send_mad(msg, NULL), 0);
	KUNIT_ASSERT_TRUE(test, shca_gsi_wait(&f->req.sent));
	KUNIT_EXPECT_EQ(test, f->req.send_status, IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_GE(test, jiffies_to_msecs(jiffies - t0), 200);
	KUNIT_EXPECT_FALSE(test, completion_done(&f->resp.recv));
}

/* QP1 is the MAD layer's: there is one per device, and only in the kernel. */
static void shca_gsi_one_per_device(struct kunit *test)
{
	struct shca_gsi_fix *f = test->priv;
	struct ib_cq *cq;
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_GSI,
		.port_num = 1,
	};
	struct ib_pd *pd = shca_kunit_pd(test, f->dev[0]);
	struct ib_qp *qp;

	cq = ib_alloc_cq(f->dev[0], NULL, 8, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	shca_kunit_defer(test, shca_kunit_free_cq, cq);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ib_create_qp(pd, &init);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EBUSY);
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
}

static struct kunit_case shca_gsi_cases[] = {
	KUNIT_CASE_PARAM(shca_gsi_round_trip, shca_gsi_where_gen_params),
	KUNIT_CASE_PARAM(shca_gsi_lost, shca_gsi_where_gen_params),
	KUNIT_CASE(shca_gsi_one_per_device),
	{}
};

static struct kunit_suite shca_gsi_suite = {
	.name = "shca_gsi",
	.init = shca_gsi_init,
	.test_cases = shca_gsi_cases,
};

kunit_test_suites(&shca_gsi_suite);
