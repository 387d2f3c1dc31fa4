"""The anchor KL of :mod:`train.ppo` (``--anchor-kl W``): keep the policy near the network it started from.

PPO from a distilled student pulls it back to its members' level (``lab/notebook.md``, "Distilled
ensembles"). With ``anchor_kl > 0`` the loss adds ``W * KL(anchor || policy)`` per decision, averaged over the
minibatch, the anchor being the ``init_from`` network, frozen (read again from its file on resume). Illegal
actions have probability exactly 0 under the anchor and finite log-probabilities on both sides
(:mod:`train.masked`), so the KL is finite. Logged as ``anchor_kl``; not applied during the value warm-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from agents import nn as ann
from train.masked import masked_logits, masked_probs


@dataclass
class AnchorSettings:
    anchor_kl: float = 0.0
    """weight of KL(anchor || policy) per decision in the loss, the anchor being the ``init_from`` network, frozen
    (0: off; logged as ``anchor_kl`` in TensorBoard): keeps PPO from a distilled student near the student, which
    plain PPO pulls back to its members' level (lab/notebook.md, "Distilled ensembles")"""


class AnchorKL:
    """``prepare`` the anchor's policy over an update's batch once, then ``kl(idx, logp_all)`` per minibatch."""

    def __init__(self, path: str, weight: float, device: torch.device, wait_inputs: bool = False) -> None:
        net = ann.load(path)
        # the learner's inputs (computed once per batch) are the anchor's: wait inputs added with zero weights
        self.net = (ann.add_wait_inputs(net) if wait_inputs and not net.config.wait_inputs else net).to(
            device
        )
        self.net.requires_grad_(False)
        self.weight = weight
        self.lp_all = self.p_all = None

    def prepare(self, tile_all: torch.Tensor, glob_all: torch.Tensor, illegal_all: torch.Tensor, mb: int):
        """The anchor's log-probabilities and probabilities of the batch's rows (in chunks of ``mb``)."""
        k = illegal_all.shape[0]
        with torch.no_grad():
            self.lp_all = torch.cat([
                F.log_softmax(masked_logits(self.net, tile_all[j : j + mb], glob_all[j : j + mb],
                                            illegal_all[j : j + mb])[0], dim=1)
                for j in range(0, k, mb)
            ])  # fmt: skip
            self.p_all = masked_probs(self.lp_all, illegal_all)

    def kl(self, idx: torch.Tensor, logp_all: torch.Tensor) -> torch.Tensor:
        """Mean KL(anchor || policy) over the minibatch rows ``idx`` of the prepared batch."""
        anchor_lp = torch.index_select(self.lp_all, 0, idx)
        anchor_p = torch.index_select(self.p_all, 0, idx)
        return (anchor_p * (anchor_lp - logp_all)).sum(1).mean()
