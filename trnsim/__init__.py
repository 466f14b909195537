"""trnsim: analyze Trainium scale-up topologies and model how fast collectives run on them."""

__version__ = "0.1.0"
