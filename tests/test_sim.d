tests/test_sim: tests/test_sim.c reports/analysis.h engine/backend.h \
 engine/device.h profiler/span.h profiler/nvtx_ranges.h \
 profiler/recorder.h profiler/span.h profiler/store.h engine/scenario.h \
 engine/launcher.h engine/backend.h engine/model_zoo.h profiler/store.h \
 engine/trainer.h engine/reducer.h engine/buckets.h engine/timing.h \
 engine/model_zoo.h engine/netmodel.h engine/scenario.h \
 engine/sim/sim_contention.h engine/sim/sim_host.h \
 reports/sweep_summary.h engine/timing.h tests/tmp_store.h
reports/analysis.h:
engine/backend.h:
engine/device.h:
profiler/span.h:
profiler/nvtx_ranges.h:
profiler/recorder.h:
profiler/span.h:
profiler/store.h:
engine/scenario.h:
engine/launcher.h:
engine/backend.h:
engine/model_zoo.h:
profiler/store.h:
engine/trainer.h:
engine/reducer.h:
engine/buckets.h:
engine/timing.h:
engine/model_zoo.h:
engine/netmodel.h:
engine/scenario.h:
engine/sim/sim_contention.h:
engine/sim/sim_host.h:
reports/sweep_summary.h:
engine/timing.h:
tests/tmp_store.h:
