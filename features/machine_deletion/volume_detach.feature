@machine_controller
Feature: Waiting for the Node's volumes to be detached
  After the drain, the machine controller waits until the Node's status.volumesAttached is empty and
  no VolumeAttachment says a volume is still attached to it, unless the Machine has the annotation
  machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach or spec.nodeVolumeDetachTimeout has
  expired (seed 001 "Machine deletion process" phases 5 and 6). CSI typically detaches the volumes
  once the drain has evicted the Pods that use them.

  Background:
    Given a Cluster "c1" whose control plane Machine "cp-0" is running

  @seed_001 @must @MD_VOL_001
  Scenario: A volume still attached to the Node holds the deletion, and the Machine says which
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" cannot be detached
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Machine "m1" is deleting with reason "WaitingForVolumeDetach" and the message:
      """
      Waiting for Node volumes to be detached (started at <volume wait start>)
      * PersistentVolumeClaims: default/db-data
      """
    And the Machine "m1" has the condition "VolumeDetachSucceeded" "False" with reason "WaitingForVolumeDetach"
    And the FakeMachine "m1" exists and is not marked for deletion

  @seed_001 @must @MD_VOL_002
  Scenario: A VolumeAttachment to the Node holds the deletion even when the Node lists no attached volume
    Given a running Machine "m1"
    And a VolumeAttachment attaches the CSI volume "pv-shared" of the claim "default/shared" to the Node of "m1" without any Pod
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Node of "m1" lists no attached volume
    And the Machine "m1" is deleting with reason "WaitingForVolumeDetach" and the message:
      """
      Waiting for Node volumes to be detached (started at <volume wait start>)
      * PersistentVolumeClaims: default/shared
      """

  @seed_001 @must @MD_VOL_003
  Scenario: An entry in the Node's volumesAttached holds the deletion even without a VolumeAttachment
    Given a running Machine "m1"
    And the Node of "m1" reports the volume "kubernetes.io/csi/ebs.csi.aws.com^vol-lost" as attached
    And the Machine "m1" has been deleted
    When 10 minutes pass
    Then the Machine "m1" is deleting with reason "WaitingForVolumeDetach" and the message:
      """
      Waiting for Node volumes to be detached (started at <volume wait start>)
      * Node with .status.volumesAttached entries not matching a PersistentVolume: kubernetes.io/csi/ebs.csi.aws.com^vol-lost
      """

  @seed_001 @must @MD_VOL_004
  Scenario: Once CSI has detached the evicted Pod's volume the deletion moves on
    Given a running Machine "m1" annotated "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller"
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" takes 60 seconds to detach
    When the Machine "m1" is deleted
    Then within 180 seconds the Machine "m1" is deleting with reason "WaitingForPreTerminateHook"
    And the Machine "m1" reached "WaitingForPreTerminateHook" only after the volume "pv-db" was detached from the Node of "m1"
    And the Machine "m1" has the condition "VolumeDetachSucceeded" "True"
    And a Normal event "NodeVolumesDetached" is recorded for the Machine "m1" with the message:
      """
      success waiting for node volumes detaching Machine's node "m1"
      """

  @seed_001 @must @MD_VOL_005
  Scenario Outline: A Machine annotated exclude-wait-for-node-volume-detach (<what>) does not wait for its volumes
    Given a running Machine "m1" annotated "machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach: <value>"
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" cannot be detached
    When the Machine "m1" is deleted
    Then within 120 seconds the Machine "m1" is gone
    And the FakeMachine "m1" was deleted while the volume "pv-db" was still attached to the Node of "m1"

    Examples:
      | case  | what     | value |
      | empty | no value |       |
      | true  | "true"   | true  |
      | false | "false"  | false |

  @seed_001 @must @MD_VOL_006
  Scenario Outline: A volume wait longer than nodeVolumeDetachTimeout <timeout> is given up at the next retry
    Given a running Machine "m1" with:
      | setting                 | value                                                                                 |
      | nodeVolumeDetachTimeout | <timeout>                                                                             |
      | annotation              | pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup-files: my-backup-controller |
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" cannot be detached
    When the Machine "m1" is deleted
    Then the Machine "m1" stays at "WaitingForVolumeDetach" for <earliest> to <latest> seconds, then moves to "WaitingForPreTerminateHook"
    And the Machine "m1" has the condition "VolumeDetachSucceeded" "False" with reason "WaitingForVolumeDetach"

    Examples:
      | case | timeout | earliest | latest |
      | 30s  | 30s     | 30       | 50     |
      | 1m   | 1m      | 60       | 80     |
      | 5m   | 5m      | 300      | 320    |

  @seed_001 @must @MD_VOL_007
  Scenario: Without nodeVolumeDetachTimeout the volume wait goes on
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" cannot be detached
    And the Machine "m1" has been deleted
    When 6 hours pass
    Then the Machine "m1" is deleting with reason "WaitingForVolumeDetach"

  @seed_001 @must @MD_VOL_007
  Scenario: A nodeVolumeDetachTimeout of 0 means no timeout
    Given a running Machine "m1" with:
      | setting                 | value |
      | nodeVolumeDetachTimeout | 0s    |
    And the Node of "m1" runs a Pod "default/db-0" using the claim "db-data" of the CSI volume "pv-db"
    And the volume "pv-db" cannot be detached
    And the Machine "m1" has been deleted
    When 6 hours pass
    Then the Machine "m1" is deleting with reason "WaitingForVolumeDetach"

  # seeds/001_6948c2535bf9c9aa.txt "Machine deletion process" phase 6 waits "until Node.status.volumesAttached
  # is empty". We follow upstream: the claims of Pods the drain skips are not waited for, as those Pods are
  # never evicted.
  @seed_001 @must @MD_VOL_008
  Scenario: The volume of a Pod the drain skips does not hold the deletion
    Given a running Machine "m1"
    And the Node of "m1" runs a Pod "default/cache-0" labelled "cluster.x-k8s.io/drain=skip" using the claim "cache-data" of the CSI volume "pv-cache"
    When the Machine "m1" is deleted
    Then within 60 seconds the FakeMachine "m1" is gone
    And the FakeMachine "m1" was deleted while the volume "pv-cache" was still attached to the Node of "m1"
