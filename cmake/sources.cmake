# The one list of carve's source files.  Add a file here when you add it.
set(CARVE_CORE_SOURCES
  src/core/util.c
  src/core/arena.c
  src/core/quantity.c
  src/core/rng.c
  src/core/resource.c
  src/core/mig.c
  src/core/mig_profiles.c
  src/core/gpumodel.c
  src/core/cluster.c
  src/core/match.c
  src/core/quota.c
  src/core/flavor.c
  src/core/preempt.c
  src/core/admit.c
  src/core/admit_cycle.c
  src/core/admit_check.c
  src/core/admit_index.c
  src/core/podreq.c
  src/core/place.c
  src/core/place_feas.c
  src/core/place_pod.c
  src/core/place_state.c
  src/core/place_gang.c
  src/core/place_mig.c
  src/core/place_check.c
  src/core/place_cache.c
  src/core/policy.c
  src/core/policy_fgd.c
  src/core/frag.c
)

set(CARVE_IO_SOURCES
  src/io/diag.c
  src/io/ytree.c
  src/io/decode.c
  src/io/manifest.c
  src/io/manifest_json.c
  src/io/devices.c
  src/io/miglayout.c
  src/io/csvsplit.c
  src/io/readfile.c
  src/io/walk.c
  src/io/csv.c
  src/io/load_node.c
  src/io/load_kueue.c
  src/io/load_kueue_config.c
  src/io/load_workload.c
  src/io/load_volcano.c
  src/io/load_pod.c
  src/io/load_jobs.c
  src/io/load_nvidia.c
  src/io/trace_openb.c
  src/io/jobs.c
  src/io/jobs_load.c
  src/io/jobs_csv.c
  src/io/jobs_yaml.c
  src/io/jobs_write.c
)

# The bridge: the only code that turns parsed objects into engine specs
# (inventory, queues, workloads from every source) and reads decisions back.
set(CARVE_BRIDGE_SOURCES
  src/bridge/inventory.c
  src/bridge/inventory_nodes.c
  src/bridge/inventory_nvidia.c
  src/bridge/validate.c
  src/bridge/explain.c
  src/bridge/admission.c
  src/bridge/queues.c
  src/bridge/cycles.c
  src/bridge/workloads.c
  src/bridge/plan.c
  src/bridge/plan_out.c
  src/bridge/result.c
)

# The node agent (docs/node.md): NVML, labels, device plugin, MIG apply,
# metrics.
set(CARVE_NODE_SOURCES
  src/node/nutil.c
  src/node/labels.c
  src/node/exporter.c
  src/node/agent_pods.c
  src/node/agent_mig.c
  src/node/agent.c
)

# The Kubernetes drivers (docs/kubernetes.md): the API client (config,
# requests, reflectors, store, leader election), the scheduler, servers.
set(CARVE_KUBE_SOURCES
  src/kube/kutil.c
  src/kube/kconfig.c
  src/kube/http.c
  src/kube/watch.c
  src/kube/store.c
  src/kube/lease.c
  src/kube/sched.c
  src/kube/act.c
  src/kube/trim.c
  src/kube/metrics.c
  src/kube/serve.c
)

set(CARVE_SIM_SOURCES
  src/sim/fill.c
  src/sim/format.c
  src/sim/report.c
  src/sim/table.c
  src/sim/tracegen.c
  src/sim/replay.c
  src/sim/metrics.c
  src/sim/baseline.c
)

set(CARVE_CLI_SOURCES
  src/cli/main.c
  src/cli/cmd_validate.c
  src/cli/cmd_admit.c
  src/cli/cmd_simulate.c
  src/cli/cmd_simulate_replay.c
  src/cli/cmd_simulate_fill.c
  src/cli/cmd_report.c
  src/cli/cmd_trace.c
  src/cli/cmd_scheduler.c
  src/cli/cmd_node.c
  src/cli/input.c
  src/cli/output.c
)
