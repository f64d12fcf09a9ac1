/**
 * What a stretch of calls cost this process: Node CPU (user + system, `process.cpuUsage`) and V8
 * heap bytes allocated, per call. Allocation is the growth of the used heap plus what every GC in
 * between freed (`v8.GCProfiler`), so it counts garbage too, not only what stays alive. Buffers
 * outside the V8 heap are not counted.
 */
import { GCProfiler, getHeapStatistics } from "node:v8";

export interface CallCost {
  cpuUs: number;
  bytes: number;
  calls: number;
}

export class CostMeter {
  private cpuUs = 0;
  private bytes = 0;
  private calls = 0;

  /** Run `work` (which makes `calls` calls) and add what it cost. */
  async measure<T>(calls: number, work: () => Promise<T>): Promise<T> {
    const profiler = new GCProfiler();
    profiler.start();
    const usedBefore = getHeapStatistics().used_heap_size;
    const cpuBefore = process.cpuUsage();
    const result = await work();
    const cpu = process.cpuUsage(cpuBefore);
    const usedAfter = getHeapStatistics().used_heap_size;
    const freed = profiler
      .stop()
      .statistics.reduce(
        (sum, gc) =>
          sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
        0,
      );
    this.cpuUs += cpu.user + cpu.system;
    this.bytes += usedAfter - usedBefore + freed;
    this.calls += calls;
    return result;
  }

  perCall(): CallCost {
    return { cpuUs: this.cpuUs / this.calls, bytes: this.bytes / this.calls, calls: this.calls };
  }
}
