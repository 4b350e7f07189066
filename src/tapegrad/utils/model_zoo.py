"""``torch.utils.model_zoo``: the old home of ``torch.hub.load_state_dict_from_url``, kept under
its old name ``load_url``; torchvision's downloads take their progress bar (``tqdm``) from here."""

from ..hub import load_state_dict_from_url as load_url
from ..hub import tqdm

__all__ = ["load_url", "tqdm"]
