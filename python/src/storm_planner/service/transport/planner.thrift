// The wire contract between the Nimbus plugin (Java) and the planner service (Python).
//
// This file is the single source of truth: the Java classes in
// storm-scheduler/src/main/gen-java are generated from it (`make thrift`, checked by
// tests/test_thrift_contract.py) and Python loads it at run time with thriftpy2.
//
// Units: CPU in percent of one reference core (100 = one core), memory in MB,
// times in milliseconds. Executors are named the way Storm prints them: "[start-end]".

namespace java org.stormplanner.thrift
namespace py storm_planner.thrift

/** A supervisor as Nimbus sees it this round. Only live supervisors are sent. */
struct Node {
  1: required string id;                    // supervisor id
  2: required string host;
  3: required double cpu_capacity;          // supervisor.cpu.capacity
  4: required double memory_mb;             // supervisor.memory.capacity.mb
  5: optional map<string, string> meta;     // supervisor.scheduler.meta (machine.type, speed, ...)
  6: required list<i32> free_ports;         // slots nobody uses
  7: required list<i32> used_ports;         // slots some topology uses
  8: optional double used_cpu = 0;          // declared CPU % held by topologies outside this request
  9: optional double used_memory_mb = 0;    // declared memory (MB) held by topologies outside this request
  10: optional double bandwidth_mbit;       // link capacity, Mbit/s (unset: unconstrained); meta network.bandwidth.mbit
  11: optional double used_bandwidth_mbit = 0;  // Mbit/s other work sends and receives on this node's link
}

struct Component {
  1: required string id;
  2: required string type;                  // "spout" | "bolt"
  3: required i32 parallelism;              // number of executors
  4: optional bool system = false;          // __acker, __system, __metrics...
}

struct Stream {
  1: required string from_component;
  2: required string to_component;
  3: optional string stream_id = "default";
  4: optional string grouping = "shuffle";  // shuffle | fields | global | all | direct | local_or_shuffle | none | custom
}

struct Executor {
  1: required string id;                    // "[start-end]"
  2: required string component;
  3: optional double cpu;                   // declared CPU % (TopologyDetails.getTotalCpuReqTask)
  4: optional double memory_mb;             // declared on- + off-heap MB (getTotalMemReqTask)
}

struct WorkerSlot {
  1: required string node_id;
  2: required i32 port;
}

struct TopologySpec {
  1: required string id;                    // storm id, e.g. trends-3-1700000000
  2: required string name;
  3: required list<Component> components;
  4: required list<Stream> streams;
  5: required list<Executor> executors;     // every executor, system ones included
  6: optional map<string, WorkerSlot> current;   // executor id -> slot it runs in now
  7: optional string algorithm;             // topology conf planner.algorithm; empty = service default
  8: optional i32 num_workers;              // topology.workers
  9: optional map<string, string> options;  // planner.* keys of the topology conf
  10: optional double worker_max_heap_mb;   // topology.worker.max.heap.size.mb
  11: optional i32 message_timeout_secs;    // topology.message.timeout.secs
  12: optional i32 max_spout_pending;       // topology.max.spout.pending, per spout task; 0: unset (unbounded)
}

struct PlanRequest {
  1: required string request_id;
  2: required list<Node> nodes;
  3: required list<TopologySpec> topologies;
  4: required i64 deadline_ms;              // how long the plugin will wait for the answer
  5: optional string default_algorithm;
  6: optional string token;                 // the service's shared token (serve --token-file), when it has one
}

enum ErrorKind {
  BAD_REQUEST = 1,
  UNKNOWN_ALGORITHM = 2,
  INFEASIBLE = 3,
  TIMEOUT = 4,
  INTERNAL = 5,
}

/** Why one topology got no plan. The others in the same request may still have one. */
struct PlanError {
  1: required ErrorKind kind;
  2: required string message;
}

struct TopologyPlan {
  1: required string topology_id;
  2: required string algorithm;
  3: required map<string, WorkerSlot> assignments;   // executor id -> slot
  4: optional map<string, i32> parallelism;          // advice: component -> executors
  5: optional list<string> drain;                    // node ids to empty
  6: optional map<string, double> figures;           // imc_gain, load_distance, migrations, ...
  7: optional double solve_ms;
  8: optional list<string> notes;
  9: optional PlanError error;                       // set instead of assignments on failure
  10: optional i32 reoffer_ms;                       // offer this running topology again in this many ms
                                                     // (a drain under way); unset: after planner.replan.interval.secs
}

struct PlanResponse {
  1: required string request_id;
  2: required list<TopologyPlan> plans;
}

struct Health {
  1: required string status;                // "ok"
  2: required string version;
  3: required list<string> algorithms;
  4: required i64 uptime_ms;
  5: optional map<string, i64> counters;    // refused connections, frames, requests; plan-log failures...
}

/** The whole request is unusable (not one topology of it). */
exception PlannerError {
  1: required ErrorKind kind;
  2: required string message;
}

service PlannerService {
  PlanResponse plan(1: PlanRequest request) throws (1: PlannerError error);
  Health health();
}
