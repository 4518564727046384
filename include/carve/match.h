/*
 * match.h - Kubernetes matching semantics, written once: node selectors,
 * required node affinity (nodeSelectorTerms), label selectors and
 * taints/tolerations.  The placer matches pods against nodes with it, the
 * admission engine matches podSets against ResourceFlavors with it, and the
 * io and sim layers should too.
 *
 * Everything matches against a struct carve_labels: a label lookup that
 * serves a node (its label array, as carve_node_label() reads it), a Kueue
 * ResourceFlavor's nodeLabels, or any other store through a callback.
 * Nothing here allocates or keeps a pointer; all arguments are borrowed for
 * the call.  A NULL string and "" are the same value (Go's zero string),
 * except a label lookup's result: NULL there means "no such label".
 *
 * Sources (Kubernetes and Kueue source):
 *  - k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go:
 *    RequiredNodeAffinity.Match = nodeSelector (labels.SelectorFromSet) AND
 *    the nodeSelectorTerms; terms are ORed, a term's expressions ANDed;
 *    NewLazyErrorNodeSelector skips an empty term ("nil or empty term
 *    selects no objects"), a term with an expression that does not parse
 *    (nodeSelectorTerm.parseErrs) matches nothing, and so an empty terms
 *    list matches nothing.
 *  - k8s.io/apimachinery/pkg/labels/selector.go: NewRequirement (In/NotIn need
 *    values, Exists/DoesNotExist none, Gt/Lt exactly one that
 *    strconv.ParseInt(v, 10, 64) accepts) and Requirement.Matches (NotIn and
 *    DoesNotExist match a missing label; Gt/Lt need the label present and
 *    parsing as an int64, else no match).
 *  - k8s.io/api/core/v1/toleration.go and component-helpers
 *    scheduling/corev1/helpers.go: Toleration.ToleratesTaint and
 *    FindMatchingUntoleratedTaint.
 *  - kube-scheduler plugins/tainttoleration Filter and
 *    plugins/helper.DoNotScheduleTaintsFilterFunc: only NoSchedule and
 *    NoExecute taints are checked when scheduling; Kueue's flavorassigner
 *    filters a flavor's nodeTaints with the same two effects.
 *  - Kueue pkg/scheduler/flavorassigner flavorSelector: the podSet's
 *    nodeSelector and affinity expressions are matched against a flavor's
 *    nodeLabels only on label keys the flavors define (see
 *    CARVE_MATCH_OWN_KEYS).
 */
#ifndef CARVE_MATCH_H
#define CARVE_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "carve/admit.h"
#include "carve/cluster.h"

/*
 * A set of labels to match against.  With get NULL the labels are the array
 * v[0..n) and a key's value is that of its first entry (carve_node_label's
 * rule); otherwise get(obj, key) answers.  Either way a NULL value means the
 * set does not hold the key.
 */
struct carve_labels {
	const struct carve_label *v;
	size_t n;
	const char *(*get)(const void *obj, const char *key);
	const void *obj;
};

/* The labels of an array (a node's labels, a flavor's nodeLabels), by value. */
struct carve_labels carve_labels_of(const struct carve_label *v, size_t n);

/* Value of key in l, or NULL when l does not hold it (or key is NULL). */
const char *carve_labels_get(const struct carve_labels *l, const char *key);

/*
 * Which label keys a selector or affinity expression is checked on.
 *   CARVE_MATCH_ALL_KEYS: Kubernetes (a node): every key; a requirement on a
 *       key the set lacks is judged as Kubernetes judges a missing label.
 *   CARVE_MATCH_OWN_KEYS: Kueue's flavor matching: only keys the set holds.
 *       A nodeSelector entry or an affinity expression on another key is not
 *       the flavor's business and is skipped (true); a term left with nothing
 *       to check, an empty term included, matches (Kueue drops the whole
 *       affinity then: "If a term becomes empty, it means node affinity
 *       matches any flavor").  Kueue itself checks the keys of every flavor
 *       of the resource group; carve checks the flavor's own keys.
 */
enum carve_match_mode {
	CARVE_MATCH_ALL_KEYS = 0,
	CARVE_MATCH_OWN_KEYS = 1
};

/*
 * Whether s is a decimal int64 as Go's strconv.ParseInt(s, 10, 64) reads it:
 * an optional sign, then digits only, no overflow.  Sets *out when true.
 */
bool carve_match_parse_int(const char *s, int64_t *out);

/*
 * Whether expression e is well formed (labels.NewRequirement): a key; op one
 * of In, NotIn (at least one value), Exists, DoesNotExist (no value), Gt, Lt
 * (exactly one value, an integer by carve_match_parse_int).  A malformed
 * expression matches nothing.
 */
bool carve_match_expr_valid(const struct carve_match_expr *e);

/*
 * One NodeSelectorRequirement against l (Requirement.Matches):
 *   In           label present and its value one of values;
 *   NotIn        label missing, or its value none of values;
 *   Exists       label present;  DoesNotExist  label missing;
 *   Gt, Lt       label present, label and the one value both integers, and
 *                label > value (Gt) or label < value (Lt); else false.
 * False for a malformed expression (carve_match_expr_valid).
 */
bool carve_match_expr(const struct carve_labels *l, const struct carve_match_expr *e);

/*
 * Required node affinity: true when some term matches (ORed), a term
 * matching when every expression of it does (ANDed).  CARVE_MATCH_ALL_KEYS:
 * an empty term matches nothing and so does an empty list (n 0); callers
 * with no affinity at all simply do not call this.  CARVE_MATCH_OWN_KEYS:
 * see enum carve_match_mode.
 */
bool carve_match_terms(const struct carve_labels *l, const struct carve_match_term *terms,
		       size_t n, enum carve_match_mode mode);

/* One nodeSelector / matchLabels pair: l holds key with exactly value. */
bool carve_match_label(const struct carve_labels *l, const char *key, const char *value);

/*
 * A nodeSelector (or a LabelSelector's matchLabels): every pair of sel
 * holds (carve_match_label), so an empty one matches everything.  With
 * CARVE_MATCH_OWN_KEYS pairs on keys l does not hold are skipped.  On false
 * *bad (when bad is not NULL) is the index of the first pair that failed.
 */
bool carve_match_selector(const struct carve_labels *l, const struct carve_label *sel, size_t n,
			  enum carve_match_mode mode, size_t *bad);

/*
 * A metav1.LabelSelector: matchLabels (carve_match_selector) AND every
 * matchExpressions entry (carve_match_expr, Kubernetes keys).  Gt and Lt are
 * not label-selector operators (LabelSelectorAsSelector refuses them): such
 * an expression matches nothing.  An empty selector matches everything.
 */
bool carve_match_label_selector(const struct carve_labels *l, const struct carve_label *labels,
				size_t nlabels, const struct carve_match_expr *exprs, size_t nexprs);

/* ---- taints and tolerations ---- */

/*
 * Whether taint keeps a pod that does not tolerate it off a node: effect
 * NoSchedule or NoExecute (DoNotScheduleTaintsFilterFunc; NoExecute also
 * evicts, which carve does not model).  PreferNoSchedule never blocks
 * scheduling.  A taint with no effect (NULL or "") or an unknown one never
 * blocks either: the API server refuses such a taint (Taint.effect is
 * required; carve's loaders refuse it too), and where one exists anyway
 * both kube-scheduler's filter and Kueue's flavor check skip it, since they
 * look at the two effects above only.
 */
bool carve_taint_blocks(const struct carve_taint_spec *taint);

/*
 * Toleration.ToleratesTaint:
 *   - an empty toleration effect matches every effect; otherwise it must
 *     equal the taint's (so an effect-naming toleration does not match a
 *     taint without effect);
 *   - an empty toleration key matches every key; otherwise it must equal the
 *     taint's;
 *   - operator empty or Equal: values must be equal; Exists: any value;
 *     another operator: no match.
 * A toleration the API server refuses (ValidateTolerations) tolerates
 * nothing: Exists with a value, or an empty key with an operator other than
 * Exists.  carve's loaders refuse both.
 */
bool carve_tolerates(const struct carve_toleration_spec *tol, const struct carve_taint_spec *taint);

/* Whether any of the n tolerations tolerates taint (TolerationsTolerateTaint). */
bool carve_tolerations_tolerate(const struct carve_toleration_spec *tols, size_t n,
				const struct carve_taint_spec *taint);

/*
 * FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc: the first
 * of the ntaints taints that blocks scheduling (carve_taint_blocks) and none
 * of the ntols tolerations tolerates, or NULL when the pod may go there.
 */
const struct carve_taint_spec *carve_untolerated_taint(const struct carve_taint_spec *taints,
						       size_t ntaints,
						       const struct carve_toleration_spec *tols,
						       size_t ntols);

#endif
