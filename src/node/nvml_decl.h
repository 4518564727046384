/*
 * nvml_decl.h - carve's own declarations of the parts of NVML it uses:
 * return codes, constants, the structures passed by pointer and the
 * function types resolved with dlsym.  Written from NVML's public API
 * reference (docs.nvidia.com/deploy/nvml-api/, "NVML API Reference
 * Guide"); the driver's nvml.h is not vendored.  Layouts must match the
 * driver's ABI exactly: every struct here is the one the named versioned
 * function takes.  Shared by src/node/nvml*.c and the test mock
 * (tests/node/mocknvml.c), which implements the same functions.
 */
#ifndef CARVE_NVML_DECL_H
#define CARVE_NVML_DECL_H

/* nvmlReturn_t (API reference, "Error reporting"). */
typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_IN_USE 19
#define NVML_ERROR_INSUFFICIENT_RESOURCES 23
#define NVML_ERROR_UNKNOWN 999

/* Buffer sizes ("Constants"). */
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

/* Opaque handles. */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* nvmlDeviceGetMemoryInfo: bytes; note the order total, free, used. */
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

/* nvmlDeviceGetPciInfo_v3. */
typedef struct {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain, bus, device;
	unsigned int pciDeviceId;    /* device id << 16 | vendor id */
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* nvmlDeviceGetUtilizationRates: percent over the last sample period. */
typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

/* nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory; /* NVML_VALUE_NOT_AVAILABLE: unknown */
	unsigned int gpuInstanceId;       /* 0xFFFFFFFF: not on a MIG device */
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* nvmlTemperatureSensors_t, nvmlClockType_t. */
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

/* nvmlDeviceArchitecture_t. */
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10

/* MIG mode values (nvmlDeviceGetMigMode). */
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/*
 * GPU-instance profiles: the argument of nvmlDeviceGetGpuInstanceProfileInfoV
 * is NVML_GPU_INSTANCE_PROFILE_* (0 = 1 slice ... ); the info it returns has
 * the profile *id* (nvidia-smi's "ID" column: 19 for 1g.10gb on H100),
 * which every other call takes.  carve asks every value below the bound.
 */
#define NVML_GPU_INSTANCE_PROFILE_COUNT_MAX 16
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT_MAX 10
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0

/* Struct version word: sizeof | version << 24 (nvml.h's NVML_STRUCT_VERSION). */
#define NVML_STRUCT_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((ver) << 24U)))

typedef struct {
	unsigned int version;              /* nvmlGpuInstanceProfileInfo_v2 */
	unsigned int id;                   /* profile id */
	unsigned int isP2pSupported;
	unsigned int sliceCount;           /* compute slices */
	unsigned int instanceCount;        /* most instances of it */
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
	unsigned long long memorySizeMB;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* "MIG 1g.10gb" */
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2)

typedef struct {
	unsigned int start, size;          /* memory slices */
} nvmlGpuInstancePlacement_t;

typedef struct {
	nvmlDevice_t device;
	unsigned int id;                   /* GPU instance id */
	unsigned int profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct {
	unsigned int version;              /* nvmlComputeInstanceProfileInfo_v2 */
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount;
	unsigned int sharedJpegCount, sharedOfaCount;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlComputeInstanceProfileInfo_v2_t;
#define nvmlComputeInstanceProfileInfo_v2 NVML_STRUCT_VERSION(nvmlComputeInstanceProfileInfo_v2_t, 2)

/* nvmlEventSetWait_v2. */
typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;      /* the Xid for nvmlEventTypeXidCriticalError */
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL

/*
 * Every function carve calls that returns nvmlReturn_t, as X(name,
 * arguments): REQ when nd_nvml_open fails without it, OPT when the fields
 * it fills are -1 without it.  nvmlErrorString (const char *) is resolved
 * on its own.
 */
#define ND_NVML_FUNCS(REQ, OPT)                                                          \
	REQ(nvmlInit_v2, (void))                                                         \
	REQ(nvmlShutdown, (void))                                                        \
	REQ(nvmlSystemGetDriverVersion, (char *v, unsigned int len))                     \
	OPT(nvmlSystemGetCudaDriverVersion_v2, (int *v))                                 \
	REQ(nvmlDeviceGetCount_v2, (unsigned int *n))                                    \
	REQ(nvmlDeviceGetHandleByIndex_v2, (unsigned int i, nvmlDevice_t *d))            \
	REQ(nvmlDeviceGetUUID, (nvmlDevice_t d, char *s, unsigned int len))              \
	REQ(nvmlDeviceGetName, (nvmlDevice_t d, char *s, unsigned int len))              \
	OPT(nvmlDeviceGetMinorNumber, (nvmlDevice_t d, unsigned int *v))                 \
	OPT(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t d, nvmlPciInfo_t *p))                 \
	REQ(nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_t *m))                  \
	OPT(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t d, int *maj, int *min))    \
	OPT(nvmlDeviceGetArchitecture, (nvmlDevice_t d, unsigned int *a))                \
	OPT(nvmlDeviceGetNumaNodeId, (nvmlDevice_t d, unsigned int *node))               \
	OPT(nvmlDeviceGetMigMode, (nvmlDevice_t d, unsigned int *cur, unsigned int *pend)) \
	OPT(nvmlDeviceGetUtilizationRates, (nvmlDevice_t d, nvmlUtilization_t *u))       \
	OPT(nvmlDeviceGetPowerUsage, (nvmlDevice_t d, unsigned int *mw))                 \
	OPT(nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t d, unsigned long long *mj)) \
	OPT(nvmlDeviceGetTemperature, (nvmlDevice_t d, int sensor, unsigned int *c))     \
	OPT(nvmlDeviceGetClockInfo, (nvmlDevice_t d, int type, unsigned int *mhz))       \
	OPT(nvmlDeviceGetComputeRunningProcesses_v3,                                     \
	    (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p))                     \
	OPT(nvmlDeviceGetGraphicsRunningProcesses_v3,                                    \
	    (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p))                     \
	OPT(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t d, unsigned int *n))           \
	OPT(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t d, unsigned int i, nvmlDevice_t *m)) \
	OPT(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t m, unsigned int *id))              \
	OPT(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t m, unsigned int *id))          \
	OPT(nvmlDeviceGetGpuInstanceProfileInfoV,                                        \
	    (nvmlDevice_t d, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t *i))  \
	OPT(nvmlDeviceGetGpuInstances,                                                   \
	    (nvmlDevice_t d, unsigned int profileId, nvmlGpuInstance_t *v, unsigned int *n)) \
	OPT(nvmlDeviceGetGpuInstanceById, (nvmlDevice_t d, unsigned int id, nvmlGpuInstance_t *gi)) \
	OPT(nvmlGpuInstanceGetInfo, (nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *i))    \
	OPT(nvmlDeviceCreateGpuInstanceWithPlacement,                                    \
	    (nvmlDevice_t d, unsigned int profileId, const nvmlGpuInstancePlacement_t *p, \
	     nvmlGpuInstance_t *gi))                                                     \
	OPT(nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gi))                              \
	OPT(nvmlGpuInstanceGetComputeInstanceProfileInfoV,                               \
	    (nvmlGpuInstance_t gi, unsigned int profile, unsigned int eng,               \
	     nvmlComputeInstanceProfileInfo_v2_t *i))                                    \
	OPT(nvmlGpuInstanceGetComputeInstances,                                          \
	    (nvmlGpuInstance_t gi, unsigned int profileId, nvmlComputeInstance_t *v,     \
	     unsigned int *n))                                                           \
	OPT(nvmlGpuInstanceCreateComputeInstance,                                        \
	    (nvmlGpuInstance_t gi, unsigned int profileId, nvmlComputeInstance_t *ci))   \
	OPT(nvmlComputeInstanceDestroy, (nvmlComputeInstance_t ci))                      \
	OPT(nvmlEventSetCreate, (nvmlEventSet_t *s))                                     \
	OPT(nvmlDeviceRegisterEvents, (nvmlDevice_t d, unsigned long long types, nvmlEventSet_t s)) \
	OPT(nvmlEventSetWait_v2, (nvmlEventSet_t s, nvmlEventData_t *e, unsigned int ms)) \
	OPT(nvmlEventSetFree, (nvmlEventSet_t s))

#endif
