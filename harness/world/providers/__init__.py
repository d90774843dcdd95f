"""Cluster API providers the world plays on the management cluster: fake infrastructure
(:mod:`.infrastructure`), fake bootstrap (:mod:`.bootstrap`) and a minimal KubeadmControlPlane
(:mod:`.controlplane`). They talk to clusters only through the client interface."""
