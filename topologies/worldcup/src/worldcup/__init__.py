"""World Cup 1998 requests (Elastic Allocator's workload): Top-K objects, Word Count over URL tokens,
and a Join with the object catalogue; components, logic and the direct-count oracle.

``worldcup.expected_top_k(feed, k)``, ``expected_word_counts(feed)`` and
``expected_section_totals(feed, catalogue)`` give what the sinks' last lines must hold once the
feed drained.
"""
from worldcup.logic import section_totals, tokens_of, top_k
from worldcup.oracle import expected_section_totals, expected_top_k, expected_word_counts
from worldcup.paths import shipped_catalogue, shipped_requests

__all__ = ["expected_top_k", "expected_word_counts", "expected_section_totals", "tokens_of", "top_k",
           "section_totals", "shipped_requests", "shipped_catalogue"]
