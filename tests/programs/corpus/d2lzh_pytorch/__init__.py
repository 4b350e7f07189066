from .utils import *

