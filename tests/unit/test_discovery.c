/*
 * test_discovery.c - API discovery as kube-controller-manager's garbage collector does it:
 * the aggregated documents of GET /api and GET /apis and the legacy ones of older servers
 * read into the preferred version of each resource, the deletable resources kept, owner
 * references mapped to resources, malformed documents refused whole, and the fetch over a
 * fake apiserver in both forms, with a group that fails.
 *
 * The fixtures are written with single quotes for readability (json_of turns them into
 * double quotes); they follow what kube-apiserver 1.36 sends, trimmed to a few resources.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "client.h"
#include "discovery.h"
#include "util.h"

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- fixtures */

#define ALL_VERBS "['create','delete','deletecollection','get','list','patch','update','watch']"
#define AGGREGATED_LIST "'kind':'APIGroupDiscoveryList','apiVersion':'apidiscovery.k8s.io/v2'," \
	"'metadata':{}"

/* GET /api, aggregated: the core group has no name. Its subresources are listed apart. */
static const char core_aggregated[] =
	"{" AGGREGATED_LIST ",'items':[{'metadata':{'creationTimestamp':null},'versions':["
	"{'version':'v1','resources':["
	"{'resource':'bindings','responseKind':{'group':'','version':'','kind':'Binding'},"
	"'scope':'Namespaced','singularResource':'binding','verbs':['create']},"
	"{'resource':'configmaps','responseKind':{'group':'','version':'','kind':'ConfigMap'},"
	"'scope':'Namespaced','singularResource':'configmap','verbs':" ALL_VERBS ","
	"'shortNames':['cm']},"
	"{'resource':'events','responseKind':{'group':'','version':'','kind':'Event'},"
	"'scope':'Namespaced','singularResource':'event','verbs':" ALL_VERBS ","
	"'shortNames':['ev']},"
	"{'resource':'namespaces','responseKind':{'group':'','version':'','kind':'Namespace'},"
	"'scope':'Cluster','singularResource':'namespace',"
	"'verbs':['create','delete','get','list','patch','update','watch'],'shortNames':['ns'],"
	"'subresources':[{'subresource':'finalize','responseKind':{'group':'','version':'',"
	"'kind':'Namespace'},'verbs':['update']},{'subresource':'status','responseKind':"
	"{'group':'','version':'','kind':'Namespace'},'verbs':['get','patch','update']}]},"
	"{'resource':'pods','responseKind':{'group':'','version':'','kind':'Pod'},"
	"'scope':'Namespaced','singularResource':'pod','verbs':" ALL_VERBS ","
	"'shortNames':['po'],'categories':['all'],'subresources':["
	"{'subresource':'eviction','responseKind':{'group':'policy','version':'v1',"
	"'kind':'Eviction'},'verbs':['create']},"
	"{'subresource':'log','responseKind':{'group':'','version':'','kind':'Pod'},"
	"'verbs':['get']},"
	"{'subresource':'status','responseKind':{'group':'','version':'','kind':'Pod'},"
	"'verbs':['get','patch','update']}]}"
	"],'freshness':'Current'}]}]}";

#define CORE_RESOURCES \
	"v1 bindings Binding ns -;" \
	"v1 configmaps ConfigMap ns lwdgpc;" \
	"v1 events Event ns lwdgpc;" \
	"v1 namespaces Namespace cluster lwdgp;" \
	"v1 pods Pod ns lwdgpc;"

/* GET /apis, aggregated: apps with one version; autoscaling with two, the first
 * preferred; events.k8s.io; metrics.k8s.io, whose server is down (Stale); and a
 * read-only group whose reports cannot be deleted. */
static const char apis_aggregated[] =
	"{" AGGREGATED_LIST ",'items':["
	"{'metadata':{'name':'apps','creationTimestamp':null},'versions':[{'version':'v1',"
	"'resources':["
	"{'resource':'controllerrevisions','responseKind':{'group':'apps','version':'v1',"
	"'kind':'ControllerRevision'},'scope':'Namespaced',"
	"'singularResource':'controllerrevision','verbs':" ALL_VERBS "},"
	"{'resource':'deployments','responseKind':{'group':'apps','version':'v1',"
	"'kind':'Deployment'},'scope':'Namespaced','singularResource':'deployment',"
	"'verbs':" ALL_VERBS ",'shortNames':['deploy'],'categories':['all'],'subresources':["
	"{'subresource':'scale','responseKind':{'group':'autoscaling','version':'v1',"
	"'kind':'Scale'},'verbs':['get','patch','update']},"
	"{'subresource':'status','responseKind':{'group':'apps','version':'v1',"
	"'kind':'Deployment'},'verbs':['get','patch','update']}]},"
	"{'resource':'replicasets','responseKind':{'group':'apps','version':'v1',"
	"'kind':'ReplicaSet'},'scope':'Namespaced','singularResource':'replicaset',"
	"'verbs':" ALL_VERBS ",'shortNames':['rs'],'categories':['all']}"
	"],'freshness':'Current'}]},"
	"{'metadata':{'name':'autoscaling','creationTimestamp':null},'versions':["
	"{'version':'v2','resources':[{'resource':'horizontalpodautoscalers','responseKind':"
	"{'group':'autoscaling','version':'v2','kind':'HorizontalPodAutoscaler'},"
	"'scope':'Namespaced','singularResource':'horizontalpodautoscaler',"
	"'verbs':" ALL_VERBS ",'shortNames':['hpa'],'categories':['all']}],"
	"'freshness':'Current'},"
	"{'version':'v1','resources':[{'resource':'horizontalpodautoscalers','responseKind':"
	"{'group':'autoscaling','version':'v1','kind':'HorizontalPodAutoscaler'},"
	"'scope':'Namespaced','singularResource':'horizontalpodautoscaler',"
	"'verbs':" ALL_VERBS ",'shortNames':['hpa'],'categories':['all']}],"
	"'freshness':'Current'}]},"
	"{'metadata':{'name':'events.k8s.io','creationTimestamp':null},'versions':["
	"{'version':'v1','resources':[{'resource':'events','responseKind':{'group':"
	"'events.k8s.io','version':'v1','kind':'Event'},'scope':'Namespaced',"
	"'singularResource':'event','verbs':" ALL_VERBS ",'shortNames':['ev']}],"
	"'freshness':'Current'}]},"
	"{'metadata':{'name':'metrics.k8s.io','creationTimestamp':null},'versions':["
	"{'version':'v1beta1','freshness':'Stale'}]},"
	"{'metadata':{'name':'audit.example.com','creationTimestamp':null},'versions':["
	"{'version':'v1','resources':[{'resource':'reports','responseKind':{'group':"
	"'audit.example.com','version':'v1','kind':'Report'},'scope':'Namespaced',"
	"'singularResource':'report','verbs':['get','list','watch']}],"
	"'freshness':'Current'}]}"
	"]}";

#define APIS_RESOURCES \
	"apps/v1 controllerrevisions ControllerRevision ns lwdgpc;" \
	"apps/v1 deployments Deployment ns lwdgpc;" \
	"apps/v1 replicasets ReplicaSet ns lwdgpc;" \
	"autoscaling/v2 horizontalpodautoscalers HorizontalPodAutoscaler ns lwdgpc;" \
	"events.k8s.io/v1 events Event ns lwdgpc;" \
	"audit.example.com/v1 reports Report ns lwg;"

/* GET /api of an older server. */
static const char core_versions[] =
	"{'kind':'APIVersions','versions':['v1'],'serverAddressByClientCIDRs':"
	"[{'clientCIDR':'0.0.0.0/0','serverAddress':'10.0.0.1:6443'}]}";

/* GET /api/v1: the subresources are resources named "parent/sub". */
static const char core_v1_resources[] =
	"{'kind':'APIResourceList','groupVersion':'v1','resources':["
	"{'name':'bindings','singularName':'binding','namespaced':true,'kind':'Binding',"
	"'verbs':['create']},"
	"{'name':'configmaps','singularName':'configmap','namespaced':true,'kind':'ConfigMap',"
	"'verbs':" ALL_VERBS ",'shortNames':['cm'],'storageVersionHash':'qFsyl6wFWjQ='},"
	"{'name':'events','singularName':'event','namespaced':true,'kind':'Event',"
	"'verbs':" ALL_VERBS ",'shortNames':['ev'],'storageVersionHash':'r2yiGXH7wu8='},"
	"{'name':'namespaces','singularName':'namespace','namespaced':false,"
	"'kind':'Namespace','verbs':['create','delete','get','list','patch','update','watch'],"
	"'shortNames':['ns'],'storageVersionHash':'Q3oi5N2YM8M='},"
	"{'name':'namespaces/finalize','singularName':'','namespaced':false,"
	"'kind':'Namespace','verbs':['update']},"
	"{'name':'namespaces/status','singularName':'','namespaced':false,"
	"'kind':'Namespace','verbs':['get','patch','update']},"
	"{'name':'pods','singularName':'pod','namespaced':true,'kind':'Pod',"
	"'verbs':" ALL_VERBS ",'shortNames':['po'],'categories':['all'],"
	"'storageVersionHash':'xPOwRZ+Yhw8='},"
	"{'name':'pods/eviction','singularName':'','namespaced':true,'group':'policy',"
	"'version':'v1','kind':'Eviction','verbs':['create']},"
	"{'name':'pods/log','singularName':'','namespaced':true,'kind':'Pod','verbs':['get']},"
	"{'name':'pods/status','singularName':'','namespaced':true,'kind':'Pod',"
	"'verbs':['get','patch','update']}]}";

/* GET /apis of an older server. */
static const char group_list[] =
	"{'kind':'APIGroupList','apiVersion':'v1','groups':["
	"{'name':'apps','versions':[{'groupVersion':'apps/v1','version':'v1'}],"
	"'preferredVersion':{'groupVersion':'apps/v1','version':'v1'}},"
	"{'name':'autoscaling','versions':[{'groupVersion':'autoscaling/v2','version':'v2'},"
	"{'groupVersion':'autoscaling/v1','version':'v1'}],"
	"'preferredVersion':{'groupVersion':'autoscaling/v2','version':'v2'}},"
	"{'name':'events.k8s.io','versions':[{'groupVersion':'events.k8s.io/v1',"
	"'version':'v1'}],'preferredVersion':{'groupVersion':'events.k8s.io/v1',"
	"'version':'v1'}},"
	"{'name':'metrics.k8s.io','versions':[{'groupVersion':'metrics.k8s.io/v1beta1',"
	"'version':'v1beta1'}],'preferredVersion':{'groupVersion':'metrics.k8s.io/v1beta1',"
	"'version':'v1beta1'}},"
	"{'name':'audit.example.com','versions':[{'groupVersion':'audit.example.com/v1',"
	"'version':'v1'}],'preferredVersion':{'groupVersion':'audit.example.com/v1',"
	"'version':'v1'}}]}";

static const char apps_v1_resources[] =
	"{'kind':'APIResourceList','apiVersion':'v1','groupVersion':'apps/v1','resources':["
	"{'name':'controllerrevisions','singularName':'controllerrevision','namespaced':true,"
	"'kind':'ControllerRevision','verbs':" ALL_VERBS ",'storageVersionHash':'85nkx63pcBU='},"
	"{'name':'deployments','singularName':'deployment','namespaced':true,"
	"'kind':'Deployment','verbs':" ALL_VERBS ",'shortNames':['deploy'],"
	"'categories':['all'],'storageVersionHash':'8aSe+NMegvE='},"
	"{'name':'deployments/scale','singularName':'','namespaced':true,'group':'autoscaling',"
	"'version':'v1','kind':'Scale','verbs':['get','patch','update']},"
	"{'name':'deployments/status','singularName':'','namespaced':true,"
	"'kind':'Deployment','verbs':['get','patch','update']},"
	"{'name':'replicasets','singularName':'replicaset','namespaced':true,"
	"'kind':'ReplicaSet','verbs':" ALL_VERBS ",'shortNames':['rs'],'categories':['all'],"
	"'storageVersionHash':'P1RzHs8/mWQ='}]}";

static const char autoscaling_v2_resources[] =
	"{'kind':'APIResourceList','apiVersion':'v1','groupVersion':'autoscaling/v2',"
	"'resources':[{'name':'horizontalpodautoscalers',"
	"'singularName':'horizontalpodautoscaler','namespaced':true,"
	"'kind':'HorizontalPodAutoscaler','verbs':" ALL_VERBS ",'shortNames':['hpa'],"
	"'categories':['all'],'storageVersionHash':'qwQve8ut294='},"
	"{'name':'horizontalpodautoscalers/status','singularName':'','namespaced':true,"
	"'kind':'HorizontalPodAutoscaler','verbs':['get','patch','update']}]}";

static const char autoscaling_v1_resources[] =
	"{'kind':'APIResourceList','apiVersion':'v1','groupVersion':'autoscaling/v1',"
	"'resources':[{'name':'horizontalpodautoscalers',"
	"'singularName':'horizontalpodautoscaler','namespaced':true,"
	"'kind':'HorizontalPodAutoscaler','verbs':" ALL_VERBS ",'shortNames':['hpa'],"
	"'categories':['all'],'storageVersionHash':'qwQve8ut294='}]}";

static const char events_v1_resources[] =
	"{'kind':'APIResourceList','apiVersion':'v1','groupVersion':'events.k8s.io/v1',"
	"'resources':[{'name':'events','singularName':'event','namespaced':true,"
	"'kind':'Event','verbs':" ALL_VERBS ",'shortNames':['ev'],"
	"'storageVersionHash':'r2yiGXH7wu8='}]}";

static const char audit_v1_resources[] =
	"{'kind':'APIResourceList','apiVersion':'v1','groupVersion':'audit.example.com/v1',"
	"'resources':[{'name':'reports','singularName':'report','namespaced':true,"
	"'kind':'Report','verbs':['get','list','watch']}]}";

/* ---------------------------------------------------------------- helpers */

/* Returns text with its single quotes made double (malloc'd). */
static char *
json_of(const char *text)
{
	char *json = xstrdup(text), *p;

	for (p = json; *p != '\0'; p++) {
		if (*p == '\'')
			*p = '"';
	}
	return json;
}

/* Returns d as "GV RESOURCE KIND SCOPE VERBS;" per resource, the verbs as letters
 * (list, watch, delete, get, patch, deletecollection) or "-" (malloc'd). */
static char *
discovery_text(const struct discovery *d)
{
	static const struct {
		unsigned bit;
		char letter;
	} verbs[] = {
		{ DISCOVERY_LIST, 'l' }, { DISCOVERY_WATCH, 'w' }, { DISCOVERY_DELETE, 'd' },
		{ DISCOVERY_GET, 'g' }, { DISCOVERY_PATCH, 'p' },
		{ DISCOVERY_DELETECOLLECTION, 'c' },
	};
	struct buf b;
	size_t i, j;

	buf_init(&b);
	for (i = 0; i < d->count; i++) {
		const struct api_resource *r = &d->items[i];

		if (*r->group != '\0')
			buf_printf(&b, "%s/", r->group);
		buf_printf(&b, "%s %s %s %s ", r->version, r->resource, r->kind,
		    r->namespaced ? "ns" : "cluster");
		for (j = 0; j < N_ELEMENTS(verbs); j++) {
			if (r->verbs & verbs[j].bit)
				buf_append(&b, &verbs[j].letter, 1);
		}
		if (r->verbs == 0)
			buf_append_str(&b, "-");
		buf_append_str(&b, ";");
	}
	return buf_detach(&b);
}

/* Checks that d reads as expected. */
static void
assert_discovery(const struct discovery *d, const char *expected)
{
	char *text = discovery_text(d);

	assert_string_equal(text, expected);
	free(text);
}

/* Parses an aggregated fixture into d; fails the test on an error. */
static void
parse_aggregated(struct discovery *d, const char *fixture)
{
	char *json = json_of(fixture), *error = NULL;

	if (discovery_parse_aggregated(json, strlen(json), d, &error) != 0)
		fail_msg("discovery_parse_aggregated: %s", error);
	free(json);
}

/* Parses a resource list fixture into d; fails the test on an error. */
static void
parse_resource_list(struct discovery *d, const char *fixture)
{
	char *json = json_of(fixture), *error = NULL;

	if (discovery_parse_resource_list(json, strlen(json), d, &error) != 0)
		fail_msg("discovery_parse_resource_list: %s", error);
	free(json);
}

/* Returns a NULL-ended list as "a,b,c" (malloc'd) and frees it. */
static char *
joined(char **list)
{
	struct buf b;
	char **s;

	buf_init(&b);
	for (s = list; *s != NULL; s++) {
		buf_printf(&b, "%s%s", b.len > 0 ? "," : "", *s);
		free(*s);
	}
	free(list);
	return buf_detach(&b);
}

/* ---------------------------------------------------------------- the aggregated form */

/* The core group of /api (it has no name) is read with its kinds, scopes and verbs; its
 * subresources are not resources. */
static void
aggregated_core_group_without_subresources(void **state)
{
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, core_aggregated);
	assert_discovery(&d, CORE_RESOURCES);
	assert_null(d.failed);
	discovery_clear(&d);
}

/* /apis: one version per group, the first; a stale group-version is skipped and named in
 * failed; ignored and undeletable resources are still listed (keep_deletable drops them). */
static void
aggregated_groups_take_the_first_version_and_report_stale_ones(void **state)
{
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, apis_aggregated);
	assert_discovery(&d, APIS_RESOURCES);
	assert_string_equal(d.failed, "metrics.k8s.io/v1beta1");
	discovery_clear(&d);
}

/* The documents of /api and /apis go into one discovery, in order. */
static void
aggregated_documents_append(void **state)
{
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, core_aggregated);
	parse_aggregated(&d, apis_aggregated);
	assert_discovery(&d, CORE_RESOURCES APIS_RESOURCES);
	assert_string_equal(d.failed, "metrics.k8s.io/v1beta1");
	discovery_clear(&d);
}

/* As ServerPreferredResources: a resource the preferred version does not serve is taken
 * from the first version that does. */
static void
aggregated_resource_missing_from_the_preferred_version_comes_from_the_next(void **state)
{
	static const char doc[] =
		"{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'example.com'},'versions':["
		"{'version':'v2','resources':[{'resource':'widgets','responseKind':{'group':"
		"'example.com','version':'v2','kind':'Widget'},'scope':'Namespaced',"
		"'verbs':['list','watch','delete']}]},"
		"{'version':'v1','resources':[{'resource':'widgets','responseKind':{'group':"
		"'example.com','version':'v1','kind':'Widget'},'scope':'Namespaced',"
		"'verbs':['list','watch','delete']},{'resource':'gadgets','responseKind':{"
		"'group':'example.com','version':'v1','kind':'Gadget'},'scope':'Cluster',"
		"'verbs':['list','watch']}]}]}]}";
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, doc);
	assert_discovery(&d, "example.com/v2 widgets Widget ns lwd;"
	    "example.com/v1 gadgets Gadget cluster lw;");
	assert_null(d.failed);
	discovery_clear(&d);
}

/* When the first version is stale, the next one is preferred. */
static void
aggregated_stale_first_version_hands_preference_to_the_next(void **state)
{
	static const char doc[] =
		"{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'example.com'},'versions':["
		"{'version':'v2','freshness':'Stale','resources':[{'resource':'widgets',"
		"'responseKind':{'group':'example.com','version':'v2','kind':'Widget'},"
		"'scope':'Namespaced','verbs':['list','watch','delete']}]},"
		"{'version':'v1','freshness':'Current','resources':[{'resource':'widgets',"
		"'responseKind':{'group':'example.com','version':'v1','kind':'Widget'},"
		"'scope':'Namespaced','verbs':['list','watch','delete']}]}]}]}";
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, doc);
	assert_discovery(&d, "example.com/v1 widgets Widget ns lwd;");
	assert_string_equal(d.failed, "example.com/v2");
	discovery_clear(&d);
}

/* What the Go types leave out (omitempty) may be absent: a group without versions, a
 * version without resources, a resource without verbs (or with null), one without a
 * responseKind (client-go keeps it only as the parent of subresources: skipped). */
static void
aggregated_omitted_fields_are_empty(void **state)
{
	static const char doc[] =
		"{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'empty.example.com'}},"
		"{'metadata':{'name':'example.com'},'versions':[{'version':'v1'},"
		"{'version':'v1beta1','resources':null}]},"
		"{'metadata':{'name':'other.example.com'},'versions':[{'version':'v1',"
		"'resources':[{'resource':'quiet','responseKind':{'group':'','version':'',"
		"'kind':'Quiet'},'scope':'Cluster'},{'resource':'nulls','responseKind':{"
		"'group':'','version':'','kind':'Null'},'scope':'Cluster','verbs':null},"
		"{'resource':'parents','scope':'Namespaced','verbs':['get'],"
		"'subresources':[{'subresource':'status','responseKind':{'group':'',"
		"'version':'','kind':'Parent'},'verbs':['get']}]}]}]}]}";
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, doc);
	assert_discovery(&d, "other.example.com/v1 quiet Quiet cluster -;"
	    "other.example.com/v1 nulls Null cluster -;");
	assert_null(d.failed);
	discovery_clear(&d);
}

/* ---------------------------------------------------------------- the legacy form */

/* An APIGroupList gives each group's preferredVersion, or its first version without one. */
static void
legacy_group_list_gives_the_preferred_group_versions(void **state)
{
	static const char more[] =
		"{'kind':'APIGroupList','apiVersion':'v1','groups':["
		"{'name':'example.com','versions':[{'groupVersion':'example.com/v1beta1',"
		"'version':'v1beta1'},{'groupVersion':'example.com/v1','version':'v1'}],"
		"'preferredVersion':{'groupVersion':'example.com/v1','version':'v1'}},"
		"{'name':'first.example.com','versions':[{'groupVersion':'first.example.com/v2',"
		"'version':'v2'},{'groupVersion':'first.example.com/v1','version':'v1'}]},"
		"{'name':'none.example.com','versions':[]}]}";
	char *json = json_of(group_list), *error = NULL, **gvs = NULL, *text;

	(void)state;
	assert_int_equal(discovery_parse_group_list(json, strlen(json), &gvs, &error), 0);
	text = joined(gvs);
	assert_string_equal(text, "apps/v1,autoscaling/v2,events.k8s.io/v1,"
	    "metrics.k8s.io/v1beta1,audit.example.com/v1");
	free(text);
	free(json);

	json = json_of(more);
	assert_int_equal(discovery_parse_group_list(json, strlen(json), &gvs, &error), 0);
	text = joined(gvs);
	assert_string_equal(text, "example.com/v1,first.example.com/v2");
	free(text);
	free(json);
}

/* An APIResourceList gives the resources of its group-version, subresources skipped. */
static void
legacy_resource_list_gives_the_resources_of_one_group_version(void **state)
{
	struct discovery d = { 0 };

	(void)state;
	parse_resource_list(&d, core_v1_resources);
	assert_discovery(&d, CORE_RESOURCES);
	parse_resource_list(&d, apps_v1_resources);
	assert_discovery(&d, CORE_RESOURCES
	    "apps/v1 controllerrevisions ControllerRevision ns lwdgpc;"
	    "apps/v1 deployments Deployment ns lwdgpc;"
	    "apps/v1 replicasets ReplicaSet ns lwdgpc;");
	/* A resource already there (from the preferred version) is not added again. */
	parse_resource_list(&d, autoscaling_v2_resources);
	parse_resource_list(&d, autoscaling_v1_resources);
	assert_int_equal(d.count, 9);
	assert_string_equal(d.items[8].version, "v2");
	assert_null(d.failed);
	discovery_clear(&d);
}

/* ---------------------------------------------------------------- deletable, find_kind */

/* The garbage collector's resources: list, watch and delete, without the events of the
 * core group and events.k8s.io. */
static void
keep_deletable_keeps_list_watch_delete_but_events(void **state)
{
	struct discovery d = { 0 };

	(void)state;
	parse_aggregated(&d, core_aggregated);
	parse_aggregated(&d, apis_aggregated);
	discovery_keep_deletable(&d);
	assert_discovery(&d,
	    "v1 configmaps ConfigMap ns lwdgpc;"
	    "v1 namespaces Namespace cluster lwdgp;"
	    "v1 pods Pod ns lwdgpc;"
	    "apps/v1 controllerrevisions ControllerRevision ns lwdgpc;"
	    "apps/v1 deployments Deployment ns lwdgpc;"
	    "apps/v1 replicasets ReplicaSet ns lwdgpc;"
	    "autoscaling/v2 horizontalpodautoscalers HorizontalPodAutoscaler ns lwdgpc;");
	assert_string_equal(d.failed, "metrics.k8s.io/v1beta1");
	discovery_clear(&d);

	discovery_keep_deletable(&d);	/* an empty discovery stays empty */
	assert_int_equal(d.count, 0);
}

/* An owner reference maps to its resource by apiVersion and kind; another version of the
 * group maps to the served one; anything else to nothing. */
static void
find_kind_maps_owner_references(void **state)
{
	static const struct {
		const char *api_version;
		const char *kind;
		const char *expected;	/* "group/version resource", NULL: not found */
	} cases[] = {
		{ "apps/v1", "ReplicaSet", "apps/v1 replicasets" },
		{ "v1", "Pod", "/v1 pods" },
		{ "v1", "Namespace", "/v1 namespaces" },
		{ "autoscaling/v2", "HorizontalPodAutoscaler",
		    "autoscaling/v2 horizontalpodautoscalers" },
		/* an older version of the group: the served resource */
		{ "autoscaling/v1", "HorizontalPodAutoscaler",
		    "autoscaling/v2 horizontalpodautoscalers" },
		{ "apps/v1beta2", "Deployment", "apps/v1 deployments" },
		/* the kind in another group is not a match */
		{ "extensions/v1beta1", "Deployment", NULL },
		{ "events.k8s.io/v1", "Event", "events.k8s.io/v1 events" },
		{ "v1", "Event", "/v1 events" },
		{ "apps/v1", "Pod", NULL },
		{ "v1", "Deployment", NULL },
		{ "apps/v1", "Widget", NULL },
		{ "metrics.k8s.io/v1beta1", "PodMetrics", NULL },
		{ "apps/v1/x", "ReplicaSet", NULL },
		{ "", "Pod", "/v1 pods" },
		{ "apps/v1", "", NULL },
	};
	struct discovery d = { 0 };
	const struct api_resource *r;
	char *text;
	size_t i;

	(void)state;
	parse_aggregated(&d, core_aggregated);
	parse_aggregated(&d, apis_aggregated);
	for (i = 0; i < N_ELEMENTS(cases); i++) {
		r = discovery_find_kind(&d, cases[i].api_version, cases[i].kind);
		if (cases[i].expected == NULL) {
			if (r != NULL)
				fail_msg("%s %s: found %s", cases[i].api_version, cases[i].kind,
				    r->resource);
			continue;
		}
		if (r == NULL)
			fail_msg("%s %s: not found", cases[i].api_version, cases[i].kind);
		text = xasprintf("%s/%s %s", r->group, r->version, r->resource);
		assert_string_equal(text, cases[i].expected);
		free(text);
	}
	assert_null(discovery_find_kind(&d, NULL, "Pod"));
	assert_null(discovery_find_kind(&d, "v1", NULL));
	discovery_clear(&d);
}

/* ---------------------------------------------------------------- malformed documents */

enum parser { AGGREGATED, GROUP_LIST, RESOURCE_LIST };

/* An aggregated document of one group whose one version has the resource r. */
#define ONE_RESOURCE(r) \
	"{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'example.com'},'versions':[" \
	"{'version':'v1','resources':[" r "]}]}]}"

/* A resource list of apps/v1 with the resource r. */
#define ONE_LEGACY_RESOURCE(r) \
	"{'kind':'APIResourceList','groupVersion':'apps/v1','resources':[" r "]}"

static const struct {
	enum parser parser;
	const char *json;
	const char *error;
} malformed[] = {
	{ AGGREGATED, "", "discovery: empty document" },
	{ AGGREGATED, "{'kind':'APIGroupDiscoveryList',", "discovery: not JSON (at byte 31)" },
	{ AGGREGATED, "{'kind':'APIGroupDiscoveryList'} {}",
	    "discovery: not JSON (data after the document at byte 32)" },
	{ AGGREGATED, "[]", "discovery: the document is an array, not an object" },
	{ AGGREGATED, "{'apiVersion':'apidiscovery.k8s.io/v2','items':[]}", "discovery: no kind" },
	{ AGGREGATED, "{'kind':'APIGroupList','apiVersion':'v1','groups':[]}",
	    "discovery: kind is \"APIGroupList\", not APIGroupDiscoveryList" },
	{ AGGREGATED, "{'kind':'APIGroupDiscoveryList','apiVersion':'v1','items':[]}",
	    "discovery: apiVersion is \"v1\", not apidiscovery.k8s.io/v2" },
	{ AGGREGATED, "{" AGGREGATED_LIST "}", "discovery: no items" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':{}}",
	    "discovery: items is an object, not an array" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':['apps']}",
	    "discovery: items[0]: is a string, not an object" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':[]}]}",
	    "discovery: items[0]: metadata is an array, not an object" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':7}}]}",
	    "discovery: items[0]: name is a number, not a string" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'../x'}}]}",
	    "discovery: items[0]: group \"../x\" is not a valid name" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},"
	    "'versions':{}}]}", "discovery: items[0]: versions is an object, not an array" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},"
	    "'versions':[{'resources':[]}]}]}", "discovery: items[0].versions[0]: no version" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},"
	    "'versions':[{'version':''}]}]}",
	    "discovery: items[0].versions[0]: version is empty" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},"
	    "'versions':[{'version':'v1?watch=1'}]}]}",
	    "discovery: items[0].versions[0]: version \"v1?watch=1\" is not a valid name" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},"
	    "'versions':[{'version':'v1','resources':{}}]}]}",
	    "discovery: items[0].versions[0]: resources is an object, not an array" },
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},"
	    "'versions':[{'version':'v1','freshness':false}]}]}",
	    "discovery: items[0].versions[0]: freshness is a boolean, not a string" },
	{ AGGREGATED, ONE_RESOURCE("3"),
	    "discovery: items[0].versions[0].resources[0]: is a number, not an object" },
	{ AGGREGATED, ONE_RESOURCE("{'scope':'Cluster','verbs':[]}"),
	    "discovery: items[0].versions[0].resources[0]: no resource" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':['widgets'],'scope':'Cluster'}"),
	    "discovery: items[0].versions[0].resources[0]: resource is an array, not a string" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','responseKind':{'kind':'Widget'}}"),
	    "discovery: items[0].versions[0].resources[0]: no scope" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','scope':'Global'}"),
	    "discovery: items[0].versions[0].resources[0]: scope is \"Global\", neither "
	    "Namespaced nor Cluster" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','scope':1}"),
	    "discovery: items[0].versions[0].resources[0]: scope is a number, not a string" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','scope':'Cluster',"
	    "'responseKind':'Widget'}"),
	    "discovery: items[0].versions[0].resources[0]: responseKind is a string, not an "
	    "object" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','scope':'Cluster',"
	    "'responseKind':{'kind':{}}}"),
	    "discovery: items[0].versions[0].resources[0]: kind is an object, not a string" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','scope':'Cluster',"
	    "'verbs':'list'}"),
	    "discovery: items[0].versions[0].resources[0]: verbs is a string, not an array" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'widgets','scope':'Cluster',"
	    "'verbs':['list',1]}"),
	    "discovery: items[0].versions[0].resources[0]: verbs[1] is a number, not a string" },
	{ AGGREGATED, ONE_RESOURCE("{'resource':'wid gets','scope':'Cluster',"
	    "'responseKind':{'kind':'Widget'}}"),
	    "discovery: items[0].versions[0].resources[0]: resource \"wid gets\" is not a valid "
	    "name" },
	/* What a message quotes stays on one line. */
	{ AGGREGATED, ONE_RESOURCE("{'resource':'w\\nI0101 forged','scope':'Cluster'}"),
	    "discovery: items[0].versions[0].resources[0]: resource \"w?I0101 forged\" is not a "
	    "valid name" },
	/* An error in a later group: the earlier ones are not kept either. */
	{ AGGREGATED, "{" AGGREGATED_LIST ",'items':[{'metadata':{'name':'a'},'versions':["
	    "{'version':'v1','resources':[{'resource':'widgets','scope':'Cluster',"
	    "'responseKind':{'kind':'Widget'},'verbs':['list']}]}]},"
	    "{'metadata':{'name':'b'},'versions':[{'version':'v1','freshness':'Stale'},"
	    "{'version':2}]}]}",
	    "discovery: items[1].versions[1]: version is a number, not a string" },

	{ GROUP_LIST, "{'kind':'APIGroupList','groups':{}}",
	    "discovery: groups is an object, not an array" },
	{ GROUP_LIST, "{'kind':'APIResourceList','groupVersion':'v1'}",
	    "discovery: kind is \"APIResourceList\", not APIGroupList" },
	{ GROUP_LIST, "{'kind':'APIGroupList','groups':[{'versions':[]}]}",
	    "discovery: groups[0]: no name" },
	{ GROUP_LIST, "{'kind':'APIGroupList','groups':[{'name':'apps','versions':['v1']}]}",
	    "discovery: groups[0].versions[0]: is a string, not an object" },
	{ GROUP_LIST, "{'kind':'APIGroupList','groups':[{'name':'apps','versions':"
	    "[{'groupVersion':'apps/v1'}]}]}", "discovery: groups[0].versions[0]: no version" },
	{ GROUP_LIST, "{'kind':'APIGroupList','groups':[{'name':'apps','versions':[],"
	    "'preferredVersion':{'version':'../v1'}}]}",
	    "discovery: groups[0].preferredVersion: version \"../v1\" is not a valid name" },

	{ RESOURCE_LIST, "nope", "discovery: not JSON (at byte 0)" },
	{ RESOURCE_LIST, "{'kind':'APIGroupList','groups':[]}",
	    "discovery: kind is \"APIGroupList\", not APIResourceList" },
	{ RESOURCE_LIST, "{'kind':'APIResourceList','resources':[]}",
	    "discovery: no groupVersion" },
	{ RESOURCE_LIST, "{'kind':'APIResourceList','groupVersion':'apps/v1/x','resources':[]}",
	    "discovery: version \"v1/x\" is not a valid name" },
	{ RESOURCE_LIST, "{'kind':'APIResourceList','groupVersion':'apps/v1','resources':{}}",
	    "discovery: resources is an object, not an array" },
	{ RESOURCE_LIST, ONE_LEGACY_RESOURCE("{'name':5,'kind':'Deployment'}"),
	    "discovery: resources[0]: name is a number, not a string" },
	{ RESOURCE_LIST, ONE_LEGACY_RESOURCE("{'name':'deployments'}"),
	    "discovery: resources[0]: no kind" },
	{ RESOURCE_LIST, ONE_LEGACY_RESOURCE("{'name':'deployments','kind':'Deployment',"
	    "'namespaced':'yes'}"),
	    "discovery: resources[0]: namespaced is a string, not a boolean" },
	{ RESOURCE_LIST, ONE_LEGACY_RESOURCE("{'name':'deployments','kind':'Deployment',"
	    "'verbs':[null]}"),
	    "discovery: resources[0]: verbs[0] is null, not a string" },
	{ RESOURCE_LIST, ONE_LEGACY_RESOURCE("{'name':'replicasets','kind':'ReplicaSet',"
	    "'namespaced':true},{'name':'deployments','kind':7}"),
	    "discovery: resources[1]: kind is a number, not a string" },
};

/* Each malformed document is refused with an error that names what is wrong, and
 * nothing of it is appended to what the discovery held. */
static void
malformed_documents_are_refused_whole(void **state)
{
	struct discovery d = { 0 };
	char *json, *error, **gvs;
	size_t i;
	int rc = 0;

	(void)state;
	parse_aggregated(&d, core_aggregated);
	for (i = 0; i < N_ELEMENTS(malformed); i++) {
		json = json_of(malformed[i].json);
		error = NULL;
		gvs = NULL;
		switch (malformed[i].parser) {
		case AGGREGATED:
			rc = discovery_parse_aggregated(json, strlen(json), &d, &error);
			break;
		case GROUP_LIST:
			rc = discovery_parse_group_list(json, strlen(json), &gvs, &error);
			break;
		case RESOURCE_LIST:
			rc = discovery_parse_resource_list(json, strlen(json), &d, &error);
			break;
		}
		if (rc != -1 || error == NULL)
			fail_msg("case %zu (%s): accepted", i, malformed[i].json);
		if (strcmp(error, malformed[i].error) != 0)
			fail_msg("case %zu: error \"%s\", not \"%s\"", i, error, malformed[i].error);
		assert_null(gvs);
		assert_int_equal(d.count, 5);
		assert_null(d.failed);
		free(error);
		free(json);
	}
	assert_discovery(&d, CORE_RESOURCES);
	discovery_clear(&d);
}

/* Nested too deep, not UTF-8, NUL bytes, a length short of the text: refused, no crash. */
static void
hostile_documents_do_not_crash(void **state)
{
	static const char nul[] = "{\"kind\":\"APIGroupDiscoveryList\"\0,\"items\":[]}";
	static const char bad_utf8[] = "{\"kind\":\"\xff\xfe\",\"items\":[]}";
	struct discovery d = { 0 };
	struct buf deep;
	char *error = NULL, **gvs = NULL;
	int i;

	(void)state;
	buf_init(&deep);
	for (i = 0; i < 100000; i++)
		buf_append_str(&deep, "[");
	assert_int_equal(discovery_parse_aggregated(deep.data, deep.len, &d, &error), -1);
	assert_non_null(strstr(error, "not JSON"));
	free(error);
	error = NULL;
	assert_int_equal(discovery_parse_group_list(deep.data, deep.len, &gvs, &error), -1);
	free(error);
	error = NULL;
	buf_free(&deep);

	assert_int_equal(discovery_parse_aggregated(nul, sizeof nul - 1, &d, &error), -1);
	free(error);
	error = NULL;
	assert_int_equal(discovery_parse_aggregated(bad_utf8, strlen(bad_utf8), &d, &error), -1);
	free(error);
	error = NULL;
	assert_int_equal(discovery_parse_aggregated("{\"kind\":\"APIGroupDiscoveryList\"}", 10,
	    &d, &error), -1);
	free(error);
	error = NULL;
	assert_int_equal(discovery_parse_resource_list(NULL, 0, &d, &error), -1);
	assert_string_equal(error, "discovery: empty document");
	free(error);
	assert_int_equal(d.count, 0);
	assert_null(d.failed);
}

/* ---------------------------------------------------------------- fetching */

/* What the fake apiserver answers for a path; anything else is a 404. */
struct route {
	const char *path;
	int code;
	const char *body;	/* with single quotes */
};

/* The fake apiserver and what the fetch delivered. */
struct exchange {
	const struct route *routes;
	size_t nroutes;
	struct buf seen;	/* "GET path;" per request */
	int calls;
	char *error;
	char *text;
	char *failed;
};

static void
respond(const char *method, const char *path, const char *content_type, const char *body,
    size_t len, struct client_reply *reply, void *arg)
{
	struct exchange *x = arg;
	size_t i;

	(void)content_type;
	(void)body;
	(void)len;
	buf_printf(&x->seen, "%s %s;", method, path);
	for (i = 0; i < x->nroutes; i++) {
		if (strcmp(x->routes[i].path, path) == 0) {
			reply->http_code = x->routes[i].code;
			reply->body = json_of(x->routes[i].body);
			return;
		}
	}
	reply->http_code = 404;
	reply->body = xstrdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"the server could not find the requested resource\","
	    "\"reason\":\"NotFound\",\"code\":404}");
}

/* The fetch's done: keeps what it got and clears d, as an owner must. */
static void
on_discovered(struct discovery *d, const char *error, void *arg)
{
	struct exchange *x = arg;

	x->calls++;
	x->error = error != NULL ? xstrdup(error) : NULL;
	x->failed = d->failed != NULL ? xstrdup(d->failed) : NULL;
	x->text = discovery_text(d);
	discovery_clear(d);
}

/* Runs a whole fetch against routes; the result is in *x. */
static void
fetch(struct exchange *x, const struct route *routes, size_t nroutes)
{
	struct event_base *base = event_base_new();
	struct client *c;

	memset(x, 0, sizeof *x);
	x->routes = routes;
	x->nroutes = nroutes;
	buf_init(&x->seen);
	c = client_new_responder(base, respond, x);
	assert_non_null(discovery_fetch_start(c, on_discovered, x));
	event_base_dispatch(base);
	assert_int_equal(x->calls, 1);
	client_free(c);
	event_base_free(base);
}

/* Frees what an exchange holds. */
static void
exchange_clear(struct exchange *x)
{
	buf_free(&x->seen);
	free(x->error);
	free(x->text);
	free(x->failed);
}

/* An aggregated server: two requests; the stale group-version is failed, and said. */
static void
fetch_aggregated_takes_two_requests(void **state)
{
	static const struct route routes[] = {
		{ "/api", 200, core_aggregated },
		{ "/apis", 200, apis_aggregated },
	};
	struct exchange x;

	(void)state;
	fetch(&x, routes, N_ELEMENTS(routes));
	assert_string_equal(x.seen.data, "GET /api;GET /apis;");
	assert_string_equal(x.text, CORE_RESOURCES APIS_RESOURCES);
	assert_string_equal(x.failed, "metrics.k8s.io/v1beta1");
	assert_string_equal(x.error, "discovery: /apis: stale: metrics.k8s.io/v1beta1");
	exchange_clear(&x);
}

/* An older server: /api/v1 and every version of every group, the preferred one first; a
 * group-version that fails (here a 500) is in failed, and the rest is read as from an
 * aggregated server. */
static void
fetch_legacy_reads_every_group_version(void **state)
{
	static const struct route routes[] = {
		{ "/api", 200, core_versions },
		{ "/apis", 200, group_list },
		{ "/api/v1", 200, core_v1_resources },
		{ "/apis/apps/v1", 200, apps_v1_resources },
		{ "/apis/autoscaling/v2", 200, autoscaling_v2_resources },
		{ "/apis/autoscaling/v1", 200, autoscaling_v1_resources },
		{ "/apis/events.k8s.io/v1", 200, events_v1_resources },
		{ "/apis/metrics.k8s.io/v1beta1", 500, "{'kind':'Status','apiVersion':'v1',"
		    "'status':'Failure','message':'Internal error occurred: error trying to reach "
		    "service','reason':'InternalError','code':500}" },
		{ "/apis/audit.example.com/v1", 200, audit_v1_resources },
	};
	struct exchange x;

	(void)state;
	fetch(&x, routes, N_ELEMENTS(routes));
	assert_string_equal(x.seen.data, "GET /api;GET /apis;GET /api/v1;GET /apis/apps/v1;"
	    "GET /apis/autoscaling/v2;GET /apis/autoscaling/v1;GET /apis/events.k8s.io/v1;"
	    "GET /apis/metrics.k8s.io/v1beta1;GET /apis/audit.example.com/v1;");
	assert_string_equal(x.text, CORE_RESOURCES APIS_RESOURCES);
	assert_string_equal(x.failed, "metrics.k8s.io/v1beta1");
	assert_string_equal(x.error, "discovery: /apis/metrics.k8s.io/v1beta1: HTTP 500 "
	    "InternalError: Internal error occurred: error trying to reach service");
	exchange_clear(&x);
}

/* A legacy group-version whose document is malformed is failed like one that errs. */
static void
fetch_legacy_malformed_group_version_is_failed(void **state)
{
	static const struct route routes[] = {
		{ "/api", 200, core_versions },
		{ "/apis", 200, "{'kind':'APIGroupList','groups':[{'name':'apps','versions':"
		    "[{'groupVersion':'apps/v1','version':'v1'}]},{'name':'audit.example.com',"
		    "'versions':[{'groupVersion':'audit.example.com/v1','version':'v1'}]}]}" },
		{ "/api/v1", 200, core_v1_resources },
		{ "/apis/apps/v1", 200, autoscaling_v1_resources },
		{ "/apis/audit.example.com/v1", 200, audit_v1_resources },
	};
	struct exchange x;

	(void)state;
	fetch(&x, routes, N_ELEMENTS(routes));
	assert_string_equal(x.text, CORE_RESOURCES "audit.example.com/v1 reports Report ns lwg;");
	assert_string_equal(x.failed, "apps/v1");
	assert_string_equal(x.error, "discovery: /apis/apps/v1: groupVersion is "
	    "\"autoscaling/v1\", not the apps/v1 asked for");
	exchange_clear(&x);
}

/* When /apis cannot be read, the core group still comes, and the error says what is
 * missing; failed names no group-version (it cannot know them). */
static void
fetch_without_apis_reports_the_error(void **state)
{
	static const struct route routes[] = {
		{ "/api", 200, core_aggregated },
		{ "/apis", 503, "{'kind':'Status','apiVersion':'v1','status':'Failure',"
		    "'message':'the server is shutting down','reason':'ServiceUnavailable',"
		    "'code':503}" },
	};
	struct exchange x;

	(void)state;
	fetch(&x, routes, N_ELEMENTS(routes));
	assert_string_equal(x.text, CORE_RESOURCES);
	assert_null(x.failed);
	assert_string_equal(x.error, "discovery: /apis: HTTP 503 ServiceUnavailable: the server is "
	    "shutting down");
	exchange_clear(&x);
}

/* A 404 for /api (an aggregated apiserver may answer so) is no core group, not an error;
 * a root document of another kind is. */
static void
fetch_tolerates_no_api_but_not_a_strange_apis(void **state)
{
	static const struct route routes[] = {
		{ "/api", 404, "{'kind':'Status','code':404}" },
		{ "/apis", 200, "{'kind':'APIResourceList','groupVersion':'v1','resources':[]}" },
	};
	static const struct route good[] = {
		{ "/apis", 200, "{" AGGREGATED_LIST ",'items':[]}" },
	};
	struct exchange x;

	(void)state;
	fetch(&x, routes, N_ELEMENTS(routes));
	assert_string_equal(x.text, "");
	assert_null(x.failed);
	assert_string_equal(x.error, "discovery: /apis: kind is \"APIResourceList\", neither "
	    "APIGroupDiscoveryList nor APIGroupList");
	exchange_clear(&x);

	fetch(&x, good, N_ELEMENTS(good));
	assert_string_equal(x.text, "");
	assert_null(x.error);
	exchange_clear(&x);
}

/* Cancels the fetch of a canceller: the answer of a request sent after the fetch's own. */
struct canceller {
	struct discovery_fetch *f;
	int calls;
};

static void
cancel_fetch(const struct client_response *resp, void *arg)
{
	struct canceller *k = arg;

	(void)resp;
	discovery_fetch_cancel(k->f);
	k->calls++;
}

/* A fetch cancelled, before any answer or with requests of group-versions out, never
 * calls done and leaves nothing behind. */
static void
fetch_cancelled_never_calls_done(void **state)
{
	static const struct route routes[] = {
		{ "/api", 200, core_versions },
		{ "/apis", 200, group_list },
		{ "/marker", 200, "{}" },
	};
	struct event_base *base = event_base_new();
	struct discovery_fetch *f;
	struct canceller k = { NULL, 0 };
	struct exchange x;
	struct client *c;

	(void)state;
	memset(&x, 0, sizeof x);
	x.routes = routes;
	x.nroutes = N_ELEMENTS(routes);
	buf_init(&x.seen);
	c = client_new_responder(base, respond, &x);
	f = discovery_fetch_start(c, on_discovered, &x);
	discovery_fetch_cancel(f);
	discovery_fetch_cancel(NULL);
	event_base_dispatch(base);
	assert_int_equal(x.calls, 0);
	assert_int_equal(x.seen.len, 0);

	/* /api and /apis are answered, which sends the group-versions' requests; the
	 * marker's answer comes next, before those start, and cancels. */
	k.f = discovery_fetch_start(c, on_discovered, &x);
	client_send(c, "GET", "/marker", NULL, NULL, 0, cancel_fetch, &k);
	event_base_dispatch(base);
	assert_int_equal(k.calls, 1);
	assert_int_equal(x.calls, 0);
	assert_string_equal(x.seen.data, "GET /api;GET /apis;GET /marker;");
	client_free(c);
	event_base_free(base);
	exchange_clear(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aggregated_core_group_without_subresources),
		cmocka_unit_test(aggregated_groups_take_the_first_version_and_report_stale_ones),
		cmocka_unit_test(aggregated_documents_append),
		cmocka_unit_test(
		    aggregated_resource_missing_from_the_preferred_version_comes_from_the_next),
		cmocka_unit_test(aggregated_stale_first_version_hands_preference_to_the_next),
		cmocka_unit_test(aggregated_omitted_fields_are_empty),
		cmocka_unit_test(legacy_group_list_gives_the_preferred_group_versions),
		cmocka_unit_test(legacy_resource_list_gives_the_resources_of_one_group_version),
		cmocka_unit_test(keep_deletable_keeps_list_watch_delete_but_events),
		cmocka_unit_test(find_kind_maps_owner_references),
		cmocka_unit_test(malformed_documents_are_refused_whole),
		cmocka_unit_test(hostile_documents_do_not_crash),
		cmocka_unit_test(fetch_aggregated_takes_two_requests),
		cmocka_unit_test(fetch_legacy_reads_every_group_version),
		cmocka_unit_test(fetch_legacy_malformed_group_version_is_failed),
		cmocka_unit_test(fetch_without_apis_reports_the_error),
		cmocka_unit_test(fetch_tolerates_no_api_but_not_a_strange_apis),
		cmocka_unit_test(fetch_cancelled_never_calls_done),
	};

	return cmocka_run_group_tests_name("discovery", tests, NULL, NULL);
}
