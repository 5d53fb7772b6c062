"""The traffic Storm adds by itself: the acker's streams, and rate priors for the user streams.

A topology's graph lists only the streams its author declared. With acking on
(``topology.acker.executors`` > 0; Storm's default is one acker per worker) every
tuple tree also costs messages between the topology's tasks and the ``__acker``
system bolt (Storm 2.8: ``SpoutOutputCollectorImpl``, ``BoltOutputCollectorImpl``,
``org.apache.storm.daemon.Acker``):

* **init** (stream ``__ack_init``): a spout task sends one to an acker for every
  tuple it emits with a message id (the root of a tree). The acker is chosen by
  the root id (fields grouping), so every spout task talks to every acker.
* **ack** (``__ack_ack``; ``__ack_fail`` on failure): a bolt task sends one for
  every input tuple it acks (one per root the tuple belongs to; one root is
  assumed here), again to the acker the root id names.
* **complete** (``__ack_ack``, acker → spout): one per finished tree, sent
  directly to the spout task that emitted the root.

So in tuples per second, the acker's traffic is as large as the topology's own:
a planner that leaves it out places ackers as if they talked to nobody, and
every ack and init then crosses whatever link separates them from their
spouts and bolts. Metrics consumers (``__metrics...`` system bolts, present
only when ``topology.metrics.consumer.register`` names one) receive one batch of
data points from every task once a bucket (``topology.builtin.metrics.bucket.size.secs``,
60 s); those streams are added too, at that rate. Other system streams
(``__system`` ticks, heartbeats) stay inside a worker and are left out.

Before metrics exist the user streams have no measured rates either.
:func:`prior_rates` propagates one: every spout emits one tuple (a unit of rate)
on each of its output streams, and every bolt emits on each of its data output
streams as many tuples as it receives on its data input streams (selectivity 1).
A bolt receives the sum of its input streams, an ``all``-grouped stream once per
executor of the bolt (every executor gets a copy: Storm sends one message per
target task). Components in a cycle are resolved in one pass over what is known
when the cycle is reached. Each rate is capped at ``MAX_PRIOR_RATE`` so a deep
cascade of joins cannot overflow.

Watermark streams are not data, and selectivity 1 over them was wrong: the
stream ids ``planner.watermark.streams`` names (default ``watermark``, the
kit's :mod:`storm_planner.streaming.watermarks`) are priced as the kit emits
them (``ReplaySpout._advance_watermark``, ``WatermarkTracker``, the bargains and
airline bolts). This prior is ours, read from that code, not Storm's or a paper's:

* a replay spout sends ``[W]`` whenever a record's event time is later than the
  last it sent: one per record where times do not tie (the synthetic stock feeds'
  trades and quotes fall on distinct milliseconds), fewer where they do. The prior
  takes one per record, i.e. a spout's watermark stream at its data rate (an upper
  bound). Watermarks are not periodic in the kit: no timer sends them.
* a bolt passes on at most one watermark per watermark it receives
  (``WatermarkTracker.update`` answers only when the minimum advanced), so its
  watermark output is the watermark copies its tasks receive (exact with one
  upstream task). A component that receives none but declares a watermark output
  starts them as a spout does: one per data tuple it receives.
* a watermark adds no data tuple: it may release data a bolt buffered (the
  bargains join's quotes), each of which came in as a data tuple. So data outputs
  follow data inputs only; a bolt fed by watermarks alone keeps the old rule
  (every input counts).
* watermarks are emitted unanchored (no message id at the spout, ``anchors=[]``
  in the bolts): they start no tuple tree, and acking one sends the acker nothing
  (``BoltOutputCollectorImpl.ack`` sends one message per anchor). So they add no
  acker stream.
* their size stays unknown until measured, as every user stream's: one number and
  no anchor would make them lighter than a data tuple, but weighed so topDown-LS
  parted the airline job's ``extract`` tasks and sent more bytes across (the
  bench's model, ``benchmarks/harness/scripts/imc-prior.py``), so no size prior is given.

Bargains (two spouts with all-grouped watermarks into ``vwap`` and ``join``, two
executors each) shows what that changed. Selectivity 1 over every input gave
``vwap`` 3 tuples per trade on each output (1 trade + 2 watermark copies) and the
join 12 per trade and quote (3 + 2·3 + 1 + 2), so ``join -> filter -> sink`` and
their acks looked like the heaviest flows, 12 tuples each per spout tuple. As the
kit emits (per trade and quote): 4 data tuples (3 into ``vwap`` and the join, the
quote out of it), 8 watermark copies, 7 acker messages; 19, 9.5 per input tuple,
as the bench measured between bargains' executors at 2 × 200 t/s (3,810 tuples/s;
rare watermarks would have made 5.5). Measured rates replace every prior as before.

The acker's streams are rated from the user streams' rates, measured or prior:
init and complete of a spout = the trees it starts (per output stream id, the
tuples emitted on it: streams of one id to several consumers carry the same
emits), ack of a bolt = the tuples it receives; watermark streams, unanchored,
count in neither. Once the workers' metrics
exist, the measured executor pairs (which count the acker's tuples: the metrics
hook sees every emit) replace all of these as the problem's traffic; the acker
streams then still carry the tuple size used for link use.

Sizes: an acker message carries two 64-bit ids and, for init, a task id
(``ACK_PAYLOAD_BYTES`` of payload, on the wire plus Storm's per-tuple
envelope, ``planner.network.tuple.overhead.bytes``); measured sizes replace it.

A user stream's size is unknown until the metrics hook has seen it (unless
``planner.tuple.bytes`` gives one). What it weighs against an acker message
follows from Storm's wire format (``KryoTupleSerializer.serialize``: source task,
stream id, ``MessageId.serialize``, then the values): a message id is a count and,
per anchor, two 64-bit ids (the root id and the xor of the edge ids: ``ANCHOR_BYTES``);
an acker message is sent unanchored and carries those same two ids (root id, ack
value) as its values. An anchored user tuple - the kind every ack stream above
assumes, since only anchored tuples are acked - therefore carries what an acker
message carries plus its own values. :func:`unknown_tuple_bytes` weighs it so:
the acker message's bytes (the problem's acker streams, measured or the default)
plus ``PRIOR_VALUES_BYTES`` for values of unknown size. That prior is ours, not
Storm's or the paper's: as many bytes as the acker's payload again (two numbers
and a few characters as the metrics hook counts them); a tweet's topic and time,
a request's object id and size, a trade's symbol, price and volume all take more.

**Remembered rates.** A topology resubmitted under a name the service has measured may start from the
component-pair rates the last run measured (``planner.loads.remembered``:
:mod:`storm_planner.service.planning.memory`); :func:`with_remembered_rates` puts them on its streams.
The metrics count, per component pair, the tuples delivered to the target's tasks; a :class:`Stream`'s
``rate`` counts emits, and an ``all`` stream delivers each emit to every executor of its target
(:mod:`storm_planner.core.traffic`). So a pair measured at R tuples/s with streams s_1..s_k gets

    rate_i = R * prior_i / sum_j(prior_j * copies_j)

(copies_j: the target's executors for an ``all`` stream, else 1): the prior's mix between the pair's
streams is kept and the pair delivers R in all. Streams of pairs the memory lacks are scaled by the ratio of
remembered to prior rates over the matched streams, so that every stream's rate is on one absolute scale
(a prior of one tuple per spout output next to hundreds per second would weigh nothing).

Apply it to the user streams first and derive the acker's streams from them, then once more to the system
streams alone (:func:`storm_planner.service.planning.convert.problem_from_thrift`): acker pairs the run measured
take their measured rate, the others follow the user streams' remembered rates. O(S) for S streams.

Complexity: O(components + streams).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping

from storm_planner.core import settings
from storm_planner.core.elements import SPOUT, Component, Stream

ACKER = "__acker"
ACK_INIT_STREAM = "__ack_init"
ACK_ACK_STREAM = "__ack_ack"
# The kit's event-time watermark stream (storm_planner.streaming.watermarks.WATERMARK_STREAM; a test keeps them equal).
WATERMARK_STREAM = "watermark"
DEFAULT_WATERMARK_STREAMS = (WATERMARK_STREAM,)
METRICS_PREFIX = "__metrics"
METRICS_STREAM = "__metrics"
# Payload of one acker message: root id and ack value (two longs) and, for init, the spout task id.
ACK_PAYLOAD_BYTES = 20.0
# One anchor in a tuple's message id: its root id and the xor of its edge ids, two longs (MessageId.serialize).
ANCHOR_BYTES = 16.0
# Values of a user tuple nothing is measured about: as much as an acker message's payload (a prior, see above).
PRIOR_VALUES_BYTES = ACK_PAYLOAD_BYTES
# A metrics batch: one task's data points of one bucket (a few hundred bytes of names and numbers).
METRICS_PAYLOAD_BYTES = 400.0
DEFAULT_METRICS_BUCKET_S = 60.0
# Prior rates are relative weights; the cap keeps a cascade of joins finite.
MAX_PRIOR_RATE = 1e6


def prior_rates(components: Iterable[Component], streams: Iterable[Stream], *,
                watermark_streams: Collection[str] = DEFAULT_WATERMARK_STREAMS) -> tuple[Stream, ...]:
    """The user streams with rates propagated from one tuple per spout output stream (selectivity 1 over data
    inputs; the ids in ``watermark_streams`` priced as the kit's watermarks, see the module's notes).

    System streams (to or from a system component) keep their rates.
    """
    by_id = {c.id: c for c in components}
    streams = tuple(streams)
    marks = frozenset(watermark_streams)
    user = [k for k, s in enumerate(streams) if _is_user(s, by_id)]
    emitted = _emitted_by_prior(by_id, [streams[k] for k in user], marks)
    out = list(streams)
    for k in user:
        s = streams[k]
        data, watermarks = emitted.get(s.source, (1.0, 1.0))
        out[k] = _with_rate(s, watermarks if s.stream_id in marks else data)
    return tuple(out)


def acker_streams(components: Iterable[Component], streams: Iterable[Stream], *,
                  tuple_bytes: float = ACK_PAYLOAD_BYTES,
                  sizes: Mapping[tuple[str, str], float] | None = None,
                  watermark_streams: Collection[str] = DEFAULT_WATERMARK_STREAMS) -> tuple[Stream, ...]:
    """The acker's streams implied by the user ``streams`` (empty without an ``__acker`` component).

    ``sizes`` (component pair → bytes per tuple, measured) overrides ``tuple_bytes`` where given. Streams whose
    id is in ``watermark_streams`` are unanchored (no tree, no ack) and imply none.
    """
    by_id = {c.id: c for c in components}
    if ACKER not in by_id:
        return ()
    sizes = sizes or {}
    marks = frozenset(watermark_streams)
    user = [s for s in streams if _is_user(s, by_id) and s.stream_id not in marks]
    received, roots_of = _received(by_id, user), _roots(user)
    added = []
    for c in by_id.values():
        if c.system:
            continue
        if c.type == SPOUT:
            roots = roots_of.get(c.id, 0.0)
            if roots > 0:
                added.append(Stream(c.id, ACKER, "fields", roots, ACK_INIT_STREAM,
                                    sizes.get((c.id, ACKER), tuple_bytes)))
                added.append(Stream(ACKER, c.id, "direct", roots, ACK_ACK_STREAM,
                                    sizes.get((ACKER, c.id), tuple_bytes)))
        elif received.get(c.id, 0.0) > 0:
            added.append(Stream(c.id, ACKER, "fields", received[c.id], ACK_ACK_STREAM,
                                sizes.get((c.id, ACKER), tuple_bytes)))
    return tuple(added)


def unknown_tuple_bytes(streams: Iterable[Stream]) -> float:
    """Wire bytes to weigh a tuple of a stream of unknown size by, beside sized streams: an anchored user tuple,
    i.e. an acker message (its anchor's two ids stand where the message's ids stand) plus its values.

    The acker message's bytes are the rate-weighted mean size of ``streams`` to and from ``__acker`` (measured,
    or ``ACK_PAYLOAD_BYTES`` plus the overhead the conversion gave them), else ``ACK_PAYLOAD_BYTES`` plus the
    default overhead; the values add ``PRIOR_VALUES_BYTES``. O(streams).
    """
    weighted = rate = 0.0
    for s in streams:
        if ACKER in (s.source, s.target) and s.tuple_bytes > 0 and s.rate > 0:
            weighted += s.rate * s.tuple_bytes
            rate += s.rate
    ack = weighted / rate if rate > 0 else ACK_PAYLOAD_BYTES + settings.TUPLE_OVERHEAD_BYTES.default
    return ack + PRIOR_VALUES_BYTES


def metrics_streams(components: Iterable[Component], *, bucket_s: float = DEFAULT_METRICS_BUCKET_S,
                    tuple_bytes: float = METRICS_PAYLOAD_BYTES) -> tuple[Stream, ...]:
    """One batch per task and bucket from every other component to each metrics consumer."""
    components = list(components)
    consumers = [c for c in components if c.system and c.id.startswith(METRICS_PREFIX)]
    if not consumers or bucket_s <= 0:
        return ()
    senders = [c for c in components if not c.id.startswith(METRICS_PREFIX)]
    return tuple(Stream(c.id, m.id, "shuffle", c.executors / bucket_s, METRICS_STREAM, tuple_bytes)
                 for m in consumers for c in senders)


def with_system_streams(components: Iterable[Component], streams: Iterable[Stream], *,
                        ack_bytes: float = ACK_PAYLOAD_BYTES,
                        sizes: Mapping[tuple[str, str], float] | None = None,
                        metrics_bucket_s: float = DEFAULT_METRICS_BUCKET_S,
                        watermark_streams: Collection[str] = DEFAULT_WATERMARK_STREAMS) -> tuple[Stream, ...]:
    """``streams`` plus the acker's and the metrics consumers' (none added where some already name them)."""
    components = tuple(components)
    streams = tuple(streams)
    named = {s.source for s in streams} | {s.target for s in streams}
    system_ids = {c.id for c in components if c.system}
    if named & system_ids:
        return streams  # the caller's graph already carries its system streams (a problem file, say)
    return (streams + acker_streams(components, streams, tuple_bytes=ack_bytes, sizes=sizes,
                                    watermark_streams=watermark_streams)
            + tuple(_sized(s, sizes, METRICS_PAYLOAD_BYTES)
                    for s in metrics_streams(components, bucket_s=metrics_bucket_s)))


Pair = tuple[str, str]


def with_remembered_rates(components: Iterable[Component], streams: tuple[Stream, ...], rates: Mapping[Pair, float],
                          *, only: Callable[[Stream], bool] = lambda stream: True,
                          scale_unmatched: bool = True) -> tuple[Stream, ...]:
    """``streams`` with the rates of the pairs in ``rates`` (the streams ``only`` selects; the others as
    they are), and, with ``scale_unmatched``, the selected streams of other pairs scaled to the same scale."""
    by_id = {c.id: c for c in components}
    chosen = [s for s in streams if only(s)]
    delivered: dict[Pair, float] = defaultdict(float)
    for stream in chosen:
        delivered[(stream.source, stream.target)] += stream.rate * copies_per_emit(stream, by_id)
    factor = {pair: rates[pair] / total for pair, total in delivered.items() if pair in rates and total > 0}
    matched = [s for s in chosen if (s.source, s.target) in factor]
    prior = sum(s.rate for s in matched)
    scale = sum(s.rate * factor[(s.source, s.target)] for s in matched) / prior if prior > 0 else 1.0
    return tuple(_rated(s, factor, scale if scale_unmatched else 1.0) if only(s) else s for s in streams)


def _rated(stream: Stream, factor: Mapping[Pair, float], scale: float) -> Stream:
    pair = (stream.source, stream.target)
    if pair in factor:
        return dataclasses.replace(stream, rate=stream.rate * factor[pair])
    if scale == 1.0:
        return stream
    return dataclasses.replace(stream, rate=stream.rate * scale)


# -- helpers -------------------------------------------------------------------------------------
def _is_user(stream: Stream, components: Mapping[str, Component]) -> bool:
    source, target = components.get(stream.source), components.get(stream.target)
    return source is not None and target is not None and not source.system and not target.system


def copies_per_emit(stream: Stream, components: Mapping[str, Component]) -> int:
    """How many tuples one emit on ``stream`` delivers to its target component."""
    return components[stream.target].executors if stream.grouping == "all" else 1


def _received(components: Mapping[str, Component], streams: Iterable[Stream]) -> dict[str, float]:
    received: dict[str, float] = defaultdict(float)
    for s in streams:
        received[s.target] += s.rate * copies_per_emit(s, components)
    return received


def _roots(streams: Iterable[Stream]) -> dict[str, float]:
    """Per component, tuples emitted per second: per output stream id, the largest rate of its
    consumers' streams (streams of one id to several consumers carry the same emits)."""
    per_id: dict[tuple[str, str], float] = {}
    for s in streams:
        key = (s.source, s.stream_id)
        per_id[key] = max(per_id.get(key, 0.0), s.rate)
    roots: dict[str, float] = defaultdict(float)
    for (source, _), rate in per_id.items():
        roots[source] += rate
    return roots


def _emitted_by_prior(components: Mapping[str, Component], streams: list[Stream],
                      marks: frozenset[str]) -> dict[str, tuple[float, float]]:
    """Per component, (data, watermark) tuples emitted on each of its output streams of that kind: spouts 1
    and 1, bolts what they receive (:func:`_emit_rates`).

    Kahn's order over the user graph; components left in cycles take what is known of their inputs.
    """
    inputs: dict[str, list[Stream]] = defaultdict(list)
    outputs: dict[str, list[Stream]] = defaultdict(list)
    waiting: dict[str, int] = defaultdict(int)
    for s in streams:
        if s.source != s.target:
            inputs[s.target].append(s)
            outputs[s.source].append(s)
            waiting[s.target] += 1
    emitted: dict[str, tuple[float, float]] = {}
    ready = [c for c in components if waiting[c] == 0 and not components[c].system]
    while ready:
        current = ready.pop()
        emitted[current] = _emit_rates(components, current, inputs, emitted, marks)
        for s in outputs[current]:
            waiting[s.target] -= 1
            if waiting[s.target] == 0 and s.target not in emitted:
                ready.append(s.target)
    for c in components:  # in cycles: one pass over what is known
        if c not in emitted and not components[c].system:
            emitted[c] = _emit_rates(components, c, inputs, emitted, marks)
    return emitted


def _emit_rates(components: Mapping[str, Component], component: str, inputs: Mapping[str, list[Stream]],
                emitted: Mapping[str, tuple[float, float]], marks: frozenset[str]) -> tuple[float, float]:
    """(data, watermark) rate of one component's output streams: a spout (or a component without inputs) 1
    and 1 (a watermark per record); a bolt its data inputs' copies on data outputs (all its inputs' when it
    has no data input), its watermark inputs' copies on watermark outputs (its data inputs' when it receives
    no watermark: it starts them, one per tuple, as a spout does per record)."""
    if components[component].type == SPOUT or not inputs.get(component):
        return 1.0, 1.0
    data = watermarks = 0.0
    for s in inputs[component]:
        known = emitted.get(s.source)
        if known is None:
            continue
        if s.stream_id in marks:
            watermarks += known[1] * copies_per_emit(s, components)
        else:
            data += known[0] * copies_per_emit(s, components)
    data_out = data if data > 0 else data + watermarks
    watermark_out = watermarks if watermarks > 0 else data_out
    return (min(MAX_PRIOR_RATE, data_out) if data_out > 0 else 1.0,
            min(MAX_PRIOR_RATE, watermark_out) if watermark_out > 0 else 1.0)


def _with_rate(stream: Stream, rate: float) -> Stream:
    return Stream(stream.source, stream.target, stream.grouping, rate, stream.stream_id, stream.tuple_bytes)


def _sized(stream: Stream, sizes: Mapping[tuple[str, str], float] | None, default: float) -> Stream:
    size = (sizes or {}).get((stream.source, stream.target), default)
    return Stream(stream.source, stream.target, stream.grouping, stream.rate, stream.stream_id, size)
