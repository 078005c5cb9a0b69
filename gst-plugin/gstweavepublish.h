// weavepublish: sends each frame's results (its regions, as weavemeta's JSON) to a file, an MQTT
// broker or Kafka, through core/publish's bounded queue; the frames pass through unchanged.
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_WEAVE_PUBLISH (gst_weave_publish_get_type())
G_DECLARE_FINAL_TYPE(GstWeavePublish, gst_weave_publish, GST, WEAVE_PUBLISH, GstBaseTransform)

#define GST_TYPE_WEAVE_PUBLISH_WHEN_FULL (gst_weave_publish_when_full_get_type())
GType gst_weave_publish_when_full_get_type(void);

G_END_DECLS
