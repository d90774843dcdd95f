@apiserver
Feature: VolumeAttachment lifecycle
  A CSI volume is attached to a Node when a Pod that uses it is scheduled there, and detached only
  after the Pod is gone and the Node no longer reports the volume in use. A VolumeAttachment's spec
  never changes (reference/fake-apiserver-semantics.md §4).

  Background:
    Given a Node "n1" that is Ready
    And a PersistentVolumeClaim "default/data" bound to a PersistentVolume "pv-1" of the CSI driver "ebs.csi.aws.com" with the volume handle "vol-1"

  @API_VA_001 @must
  Scenario: Scheduling a Pod that uses a CSI volume attaches the volume to its Node
    When a Pod "default/db-0" using the claim "data" is scheduled to Node "n1"
    Then within 30 seconds the volume "pv-1" is attached to Node "n1"
    And the VolumeAttachment of "pv-1" on Node "n1" is for the CSI driver "ebs.csi.aws.com"
    And the VolumeAttachment of "pv-1" on Node "n1" has the finalizer "external-attacher/ebs-csi-aws-com"

  @API_VA_002 @should
  Scenario: A Node reports an attached volume that its Pod uses
    When a Pod "default/db-0" using the claim "data" is scheduled to Node "n1"
    Then within 30 seconds the Pod "default/db-0" is running
    And the Node "n1" lists the volume "kubernetes.io/csi/ebs.csi.aws.com^vol-1" as attached
    And the Node "n1" lists the volume "kubernetes.io/csi/ebs.csi.aws.com^vol-1" as in use

  @API_VA_003 @must
  Scenario: A volume is detached only after its Pod is gone and the Node no longer uses it
    Given a Pod "default/db-0" using the claim "data" running on Node "n1"
    When the Pod "default/db-0" is deleted
    Then within 120 seconds the VolumeAttachment of "pv-1" on Node "n1" is gone
    And the VolumeAttachment of "pv-1" on Node "n1" was deleted after the Pod "default/db-0" was gone
    And the VolumeAttachment of "pv-1" on Node "n1" was deleted after the Node "n1" stopped listing "kubernetes.io/csi/ebs.csi.aws.com^vol-1" in use

  @API_VA_004 @must
  Scenario: A volume the Node still lists in use stays attached after its Pod is gone
    Given a Pod "default/db-0" using the claim "data" running on Node "n1"
    And the kubelet is switched off
    When the Pod "default/db-0" is deleted with a grace period of 0 seconds
    Then the Pod "default/db-0" is gone
    And the volume "pv-1" stays attached to Node "n1" for 300 seconds

  @API_VA_005 @must
  Scenario: The spec of a VolumeAttachment cannot change
    Given a Pod "default/db-0" using the claim "data" running on Node "n1"
    When the VolumeAttachment of "pv-1" on Node "n1" is moved to Node "n2"
    Then the write is refused with 422 "Invalid"
    And the refusal names the field "spec" as "field is immutable"

  @API_VA_006 @must
  Scenario: A VolumeAttachment must name a source
    When a VolumeAttachment "va-2" without a source on Node "n1" for the CSI driver "ebs.csi.aws.com" is created
    Then the write is refused with 422 "Invalid" and the message:
      """
      VolumeAttachment.storage.k8s.io "va-2" is invalid: spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName
      """
