@machine_controller
Feature: KubeadmControlPlane Machines
  Seed 001 ("Machine deletion process" phases 3 and 5) skips the drain and the volume wait of a Machine
  owned by a KubeadmControlPlane once "the pre-terminate hook has been already removed": the
  KubeadmControlPlane keeps pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup on its
  Machines and removes it, after removing the Machine's etcd member, once the Machine waits for it.
  We implement the rule as Cluster API v1.9 to v1.13 do (DESIGN.md "KCP"): it applies to a control plane
  Machine with a KubeadmControlPlane owner and without that hook. The KubeadmControlPlane here is one no
  controller acts on, so only the scenario moves the hook.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_KCP_001
  Scenario: A KubeadmControlPlane Machine without its kcp-cleanup hook is deleted without a drain
    Given a running control plane Machine "cp-1" owned by the KubeadmControlPlane "kcp"
    And the Node of "cp-1" runs a Pod "default/web-0"
    When the Machine "cp-1" is deleted
    Then within 60 seconds the Machine "cp-1" is gone
    And the Node of "cp-1" was never cordoned
    And the Pod "default/web-0" is not evicted

  @seed_001 @must @MD_KCP_002
  Scenario: A KubeadmControlPlane Machine without its kcp-cleanup hook does not wait for its volumes
    Given a running control plane Machine "cp-1" owned by the KubeadmControlPlane "kcp"
    And the Node of "cp-1" reports the volume "kubernetes.io/csi/ebs.csi.aws.com^vol-lost" as attached
    When the Machine "cp-1" is deleted
    Then within 60 seconds the Machine "cp-1" is gone
    And the Machine "cp-1" never reported the deletion stage "WaitingForVolumeDetach"

  @seed_001 @must @MD_KCP_003
  Scenario: With its kcp-cleanup hook a KubeadmControlPlane Machine is drained, then waits for the hook
    Given a running control plane Machine "cp-1" owned by the KubeadmControlPlane "kcp" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup"
    And the Node of "cp-1" runs a Pod "default/web-0"
    When the Machine "cp-1" is deleted
    Then the Node of "cp-1" is cordoned
    And the Pod "default/web-0" is evicted
    And within 60 seconds the Machine "cp-1" is deleting with reason "WaitingForPreTerminateHook"
    And the Machine "cp-1" is deleting with reason "WaitingForPreTerminateHook" and the message "Waiting for pre-terminate hooks to succeed (hooks: pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup)"

  @seed_001 @must @MD_KCP_004
  Scenario: A control plane Machine no KubeadmControlPlane owns is drained without a kcp-cleanup hook
    Given a running control plane Machine "cp-1"
    And the Node of "cp-1" runs a Pod "default/web-0"
    When the Machine "cp-1" is deleted
    Then the Node of "cp-1" is cordoned
    And the Pod "default/web-0" is evicted

  @seed_001 @must @MD_KCP_005
  Scenario: Removing the kcp-cleanup hook during a blocked drain skips the rest of the drain
    Given a running control plane Machine "cp-1" owned by the KubeadmControlPlane "kcp" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup"
    And the Node of "cp-1" runs a Pod "default/web-0" labelled "app=web"
    And the workload cluster has a PodDisruptionBudget "default/web-pdb" with minAvailable 1 selecting "app=web"
    And the Machine "cp-1" has been deleted
    When an administrator removes the annotation "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup" from the Machine "cp-1" with kubectl
    Then within 30 seconds the Machine "cp-1" is gone
    And the Pod "default/web-0" is not evicted
    And the Machine "cp-1" never reported the deletion stage "WaitingForVolumeDetach"
