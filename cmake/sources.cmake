# The one list of carve's source files.  Add a file here when you add it.
set(CARVE_CORE_SOURCES
  src/core/util.c
  src/core/arena.c
  src/core/quantity.c
  src/core/resource.c
  src/core/mig.c
  src/core/mig_profiles.c
  src/core/gpumodel.c
  src/core/cluster.c
  src/core/quota.c
  src/core/flavor.c
  src/core/preempt.c
  src/core/admit.c
  src/core/place.c
  src/core/policy.c
  src/core/policy_fgd.c
  src/core/frag.c
)

set(CARVE_IO_SOURCES
  src/io/diag.c
  src/io/ytree.c
  src/io/decode.c
  src/io/manifest.c
  src/io/csv.c
  src/io/load_node.c
  src/io/load_kueue.c
  src/io/load_volcano.c
  src/io/load_pod.c
  src/io/load_nvidia.c
  src/io/inventory.c
  src/io/validate.c
  src/io/explain.c
  src/io/admission.c
  src/io/trace_openb.c
)

set(CARVE_SIM_SOURCES
  src/sim/fill.c
)

set(CARVE_CLI_SOURCES
  src/cli/main.c
  src/cli/cmd_validate.c
  src/cli/cmd_admit.c
  src/cli/cmd_simulate.c
)
