-- xxl-ctl import's test (tests/test_import.sh): XXL-JOB 2.x before 2.3
-- kept the cron in job_cron (no schedule_type, no misfire_strategy).
-- Job 2's description holds a byte that is not UTF-8 (0xff).
CREATE TABLE `XXL_JOB_QRTZ_TRIGGER_GROUP` (`id` int, `app_name` varchar(64), `title` varchar(12), `order` tinyint, `address_type` tinyint, `address_list` varchar(512));
CREATE TABLE `xxl_job_group` (`id` int, `app_name` varchar(64), `title` varchar(12), `order` tinyint, `address_type` tinyint, `address_list` varchar(512));
INSERT INTO `xxl_job_group` VALUES (1,'imp-old','旧执行器',1,0,NULL);
CREATE TABLE `xxl_job_info` (`id` int, `job_group` int, `job_cron` varchar(128), `job_desc` varchar(255), `add_time` datetime, `update_time` datetime, `author` varchar(64), `alarm_email` varchar(255), `executor_route_strategy` varchar(50), `executor_handler` varchar(255), `executor_param` varchar(512), `executor_block_strategy` varchar(50), `executor_timeout` int, `executor_fail_retry_count` int, `glue_type` varchar(50), `glue_source` mediumtext, `glue_remark` varchar(128), `glue_updatetime` datetime, `child_jobid` varchar(255), `trigger_status` tinyint, `trigger_last_time` bigint, `trigger_next_time` bigint);
INSERT INTO `xxl_job_info` VALUES (1,1,'0 0/5 * * * ?','旧任务','2019-01-01 00:00:00','2019-01-01 00:00:00','XXL','','FIRST','oldHandler','','SERIAL_EXECUTION',0,0,'BEAN','','',NULL,'',0,0,0),
  (2,1,'0 0 1 * * ?','bad � byte','2019-01-01 00:00:00','2019-01-01 00:00:00','XXL','','FIRST','h','','SERIAL_EXECUTION',0,0,'BEAN','','',NULL,'',0,0,0);
